/**
 * Plugins: folders `<config>/plugins/<plugin>/` with a `manifest.json` that declares actions,
 * exposed as `/<plugin>:<action>` slash commands (see README.md in this folder). Schemas are strict
 * so that a typo in a manifest is reported instead of silently ignored, as for config.json.
 */
import { readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { CONFIG_BOUNDARY, type Head, OutsideError, outsideNotice, readHead, realPathInside } from "../tools/read-head.js";
import { mayExistBelow, resolveReal } from "../tools/workspace.js";
import { errorText } from "../../shared/error-text.js";

const MAX_MANIFEST_BYTES = 1024 * 1024;

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const Name = z.string().regex(NAME_PATTERN, "names use letters, digits, '.', '_' and '-' and start with a letter or digit");

const CardField = z.object({ label: z.string().min(1), value: z.string() }).strict();

export const CardSurface = z
  .object({
    type: z.literal("card"),
    title: z.string().min(1),
    /** Markdown. */
    body: z.string().optional(),
    fields: z.array(CardField).optional(),
  })
  .strict();
export type CardSurface = z.infer<typeof CardSurface>;

export const STATUS_STATES = ["ok", "info", "warning", "error"] as const;
export const StatusSurface = z
  .object({
    type: z.literal("status"),
    title: z.string().min(1),
    state: z.enum(STATUS_STATES),
    /** Markdown. */
    text: z.string().optional(),
  })
  .strict();
export type StatusSurface = z.infer<typeof StatusSurface>;

const FormField = z
  .object({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, "field names are identifiers"),
    label: z.string().min(1).optional(),
    /** Absent: a free-text field, which text-only clients can only answer with `default`. */
    choices: z.array(z.string().min(1)).min(1).optional(),
    default: z.string().optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (f.choices && new Set(f.choices).size !== f.choices.length) ctx.addIssue({ code: "custom", path: ["choices"], message: "choices must be distinct" });
    if (f.choices && f.default !== undefined && !f.choices.includes(f.default)) {
      ctx.addIssue({ code: "custom", path: ["default"], message: "default must be one of the choices" });
    }
  });
export type FormField = z.infer<typeof FormField>;

export const FormSurface = z
  .object({
    type: z.literal("form"),
    title: z.string().min(1),
    description: z.string().optional(),
    fields: z.array(FormField).default([]),
  })
  .strict()
  .superRefine((f, ctx) => {
    const names = f.fields.map((x) => x.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) ctx.addIssue({ code: "custom", path: ["fields"], message: `duplicate field "${dup}"` });
  });
export type FormSurface = z.infer<typeof FormSurface>;

export const Surface = z.discriminatedUnion("type", [CardSurface, StatusSurface, FormSurface]);
export type Surface = z.infer<typeof Surface>;

export const PluginAction = z
  .object({
    name: Name,
    description: z.string().min(1).optional(),
    hint: z.string().min(1).optional(),
    surface: Surface.optional(),
    prompt: z.string().min(1).optional(),
    run: z.array(z.string().min(1)).min(1).optional(),
    timeoutSeconds: z.number().positive().max(3600).optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const kinds = (["surface", "prompt", "run"] as const).filter((k) => a[k] !== undefined);
    if (kinds.length !== 1)
      ctx.addIssue({
        code: "custom",
        message: `action "${a.name}" needs exactly one of "surface", "prompt" or "run" (has ${kinds.length ? kinds.join(", ") : "none"})`,
      });
    if (a.timeoutSeconds !== undefined && a.run === undefined)
      ctx.addIssue({ code: "custom", path: ["timeoutSeconds"], message: "timeoutSeconds only applies to run actions" });
  });
export type PluginAction = z.infer<typeof PluginAction>;

export const Manifest = z
  .object({
    name: Name,
    description: z.string().optional(),
    version: z.string().optional(),
    actions: z.array(PluginAction),
  })
  .strict()
  .superRefine((m, ctx) => {
    const seen = new Set<string>();
    for (const [i, a] of m.actions.entries()) {
      if (seen.has(a.name)) ctx.addIssue({ code: "custom", path: ["actions", i, "name"], message: `duplicate action "${a.name}"` });
      seen.add(a.name);
    }
  });
export type Manifest = z.infer<typeof Manifest>;

/** A loaded plugin; `dir` is where run actions execute. */
export type Plugin = Manifest & { dir: string };

/** One readable line per issue, naming unknown keys the way config.json errors do. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const where = i.path.length ? i.path.map(String).join(".") : "(top level)";
      if (i.code === "unrecognized_keys") return `unknown key${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => `"${k}"`).join(", ")} at ${where}`;
      return `${where}: ${i.message}`;
    })
    .join("; ");
}

export class PluginLoadError extends Error {
  override name = "PluginLoadError";
  constructor(readonly errors: string[]) {
    super(`cannot load plugins: ${errors.join("; ")}`);
  }
}

async function readPlugin(pluginsDir: string, folder: string, inside: readonly string[]): Promise<Plugin> {
  const dir = join(pluginsDir, folder);
  const file = join(dir, "manifest.json");
  let head: Head | undefined;
  try {
    head = await readHead(file, MAX_MANIFEST_BYTES, inside);
  } catch (err) {
    if (err instanceof OutsideError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === "ENOENT" ? "has no manifest.json" : `cannot read manifest.json: ${errorText(err)}`);
  }
  if (!head) throw new Error("manifest.json is not a regular file");
  if (!head.complete) throw new Error(`manifest.json is larger than ${MAX_MANIFEST_BYTES / 1024} KiB`);
  const text = head.text;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`manifest.json is not valid JSON: ${errorText(err)}`);
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success) throw new Error(`manifest.json: ${formatIssues(parsed.error.issues)}`);
  // The folder name is the command prefix users see; a mismatch would make `/x:y` come from folder z.
  if (parsed.data.name !== folder) throw new Error(`manifest name "${parsed.data.name}" does not match its folder name`);
  return { ...parsed.data, dir };
}

export interface LoadedPlugins {
  plugins: Plugin[];
  errors: string[];
  /** Folders and manifests left out because they link outside the config folder, one line each. */
  skipped: string[];
}

/**
 * Strict loading is for reloads, which must fail as a whole so the previous runtime stays in place;
 * lenient loading is for start-up, where one broken plugin should not take the others down. The
 * plugins folder lives in the config folder, and so must (by real path) every plugin and manifest:
 * a plugin linked in from elsewhere is skipped and named, never an error that fails a reload.
 */
export async function loadPlugins(pluginsDir: string, opts: { strict: boolean }): Promise<LoadedPlugins> {
  const inside = [resolveReal("/", dirname(pluginsDir))];
  const skipped: string[] = [];
  const outside = (err: unknown): boolean => {
    if (!(err instanceof OutsideError)) return false;
    skipped.push(outsideNotice(err.path, CONFIG_BOUNDARY, err.real));
    return true;
  };
  if (!mayExistBelow(dirname(pluginsDir), pluginsDir)) return { plugins: [], errors: [], skipped };
  let folders: string[];
  try {
    await realPathInside(pluginsDir, inside);
    folders = (await readdir(pluginsDir)).filter((f) => !f.startsWith(".")).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || outside(err)) return { plugins: [], errors: [], skipped };
    const message = `cannot read plugins folder ${pluginsDir}: ${errorText(err)}`;
    if (opts.strict) throw new PluginLoadError([message]);
    return { plugins: [], errors: [message], skipped };
  }
  const plugins: Plugin[] = [];
  const errors: string[] = [];
  for (const folder of folders) {
    const path = join(pluginsDir, folder);
    // Stat follows symlinks: a plugin may be a link to another folder of the config folder.
    const isDir = await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) continue;
    try {
      await realPathInside(path, inside);
      plugins.push(await readPlugin(pluginsDir, folder, inside));
    } catch (err) {
      if (!outside(err)) errors.push(`plugin "${folder}" (${path}): ${errorText(err)}`);
    }
  }
  if (opts.strict && errors.length) throw new PluginLoadError(errors);
  return { plugins, errors, skipped };
}
