/**
 * Text fallbacks for clients that do not advertise `reasonix.io.extensionSurface`: cards and
 * statuses become Markdown for an agent_message_chunk, forms become a permission request whose
 * options stand for complete answers.
 */
import type { FormField, FormSurface, StatusSurface, Surface } from "./manifest.js";

const STATE_WORDS: Record<StatusSurface["state"], string> = {
  ok: "✅ ok",
  info: "ℹ️ info",
  warning: "⚠️ warning",
  error: "❌ error",
};

/** Permission requests cannot carry many options comfortably, nor any free text. */
export const MAX_FORM_OPTIONS = 8;

function fieldLabel(f: FormField): string {
  return f.label ?? f.name;
}

function fieldDefault(f: FormField): string {
  return f.default ?? f.choices?.[0] ?? "";
}

export function surfaceText(surface: Surface): string {
  const parts: string[] = [];
  switch (surface.type) {
    case "card":
      parts.push(`**${surface.title}**`);
      if (surface.body?.trim()) parts.push(surface.body.trim());
      if (surface.fields?.length) parts.push(surface.fields.map((f) => `- ${f.label}: ${f.value}`).join("\n"));
      break;
    case "status":
      parts.push(`**${surface.title}** — ${STATE_WORDS[surface.state]}`);
      if (surface.text?.trim()) parts.push(surface.text.trim());
      break;
    case "form":
      // Forms normally go through formAsPermission; this is for transcripts and logs.
      parts.push(`**${surface.title}**`);
      if (surface.description?.trim()) parts.push(surface.description.trim());
      if (surface.fields.length) {
        parts.push(surface.fields.map((f) => `- ${fieldLabel(f)}: ${f.choices ? f.choices.join(" | ") : fieldDefault(f) || "(text)"}`).join("\n"));
      }
      break;
  }
  return parts.join("\n\n");
}

export interface FormPermission {
  title: string;
  options: Array<{ optionId: string; name: string; kind: "allow_once" | "reject_once" }>;
  /** The form values an option stands for; undefined for Cancel or an unknown option. */
  answer(optionId: string): Record<string, string> | undefined;
}

/**
 * Each option is one complete answer. Fields with choices vary over them; free-text fields can
 * only be answered with their `default` (or ""), because a permission request has no text input.
 * Past MAX_FORM_OPTIONS combinations the only answer offered is every field's default.
 */
export function formAsPermission(surface: FormSurface): FormPermission {
  const fields = surface.fields;
  const axes = fields.map((f) => (f.choices?.length ? f.choices : [fieldDefault(f)]));
  let size = 1;
  for (const axis of axes) {
    size *= axis.length;
    if (size > MAX_FORM_OPTIONS) break;
  }

  const answers = new Map<string, Record<string, string>>();
  const options: FormPermission["options"] = [];
  if (size <= MAX_FORM_OPTIONS) {
    let combos: string[][] = [[]];
    for (const axis of axes) combos = combos.flatMap((c) => axis.map((v) => [...c, v]));
    const varying = fields.map((f, i) => (f.choices ? i : -1)).filter((i) => i >= 0);
    combos.forEach((combo, n) => {
      const optionId = `answer-${n}`;
      const name =
        varying.length === 0 ? "Submit" : varying.length === 1 ? combo[varying[0]!]! : varying.map((i) => `${fieldLabel(fields[i]!)}: ${combo[i]}`).join(", ");
      options.push({ optionId, name, kind: "allow_once" });
      answers.set(optionId, Object.fromEntries(fields.map((f, i) => [f.name, combo[i]!])));
    });
  } else {
    options.push({ optionId: "defaults", name: "Submit defaults", kind: "allow_once" });
    answers.set("defaults", Object.fromEntries(fields.map((f) => [f.name, fieldDefault(f)])));
  }
  options.push({ optionId: "cancel", name: "Cancel", kind: "reject_once" });

  return {
    title: surface.title,
    options,
    answer: (optionId) => {
      const a = answers.get(optionId);
      return a ? { ...a } : undefined;
    },
  };
}
