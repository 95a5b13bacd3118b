/**
 * Reasoning effort per provider. DeepSeek takes `thinking` plus `reasoning_effort`; other
 * OpenAI-compatible servers take `reasoning_effort` alone. `auto` sends neither, leaving the
 * provider's default.
 */
export const AUTO = "auto";

export function effortLevels(providerName: string): string[] {
  return providerName === "deepseek" ? [AUTO, "off", "low", "high", "max"] : [AUTO, "low", "medium", "high"];
}

export function effortParams(providerName: string, effort: string): Record<string, unknown> {
  if (effort === AUTO || !effortLevels(providerName).includes(effort)) return {};
  if (providerName !== "deepseek") return { reasoning_effort: effort };
  if (effort === "off") return { thinking: { type: "disabled" } };
  return { thinking: { type: "enabled" }, reasoning_effort: effort };
}

export function effortName(level: string): string {
  if (level === AUTO) return "Auto";
  if (level === "off") return "Off";
  return level[0]!.toUpperCase() + level.slice(1);
}
