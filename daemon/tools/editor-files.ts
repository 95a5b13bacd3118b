/**
 * File access routed through the editor when it offered `fs/*`, so reads see unsaved buffers and
 * writes land in them. A file that is not valid UTF-8 never goes through the editor (ACP's file
 * methods are text-only) and keeps its bytes and encoding on disk.
 *
 * A window that let a request time out lately (editor-silence.ts) is not asked again for a while:
 * reads go to the disk at once. Writes go to the disk only when that window never took one: then no
 * change of ours waits unsaved in its buffers, and the disk is what a window without fs gets. One
 * that did take writes may hold them unsaved; writing around its buffer would leave the two apart
 * (its next save undoing ours, or ours hiding the turn's earlier edits), so the write fails at once,
 * saying why, as one that timed out does.
 */
import { ReadTextFileResponse } from "../../shared/acp-schemas.js";
import { askEditor, EditorSilentError } from "./editor-request.js";
import type { EditorPicker, FileAccess, TextEncodingName } from "./types.js";

/** `timeoutMs`, the daemon's editorTimeoutSeconds, is generous (60 s): an editor answers from its buffers at once. */
export function routedFiles(sessionId: string, pick: EditorPicker, local: FileAccess, signal: AbortSignal, timeoutMs: number): FileAccess {
  return {
    async read(path) {
      let disk: { text: string; encoding: TextEncodingName } | undefined;
      let diskError: unknown;
      try {
        disk = await local.read(path);
      } catch (err) {
        diskError = err;
        // Binary files, and anything but "not on disk", stay on the local path.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
      if (disk && disk.encoding !== "utf8") return disk;
      const editor = pick("readTextFile");
      if (editor) {
        try {
          const raw = await askEditor(editor, "fs/read_text_file", { sessionId, path }, { signal, timeoutMs });
          return { text: ReadTextFileResponse.parse(raw).content, encoding: "utf8" };
        } catch {
          // The editor could not read it: the disk copy is the next best truth.
        }
      }
      if (disk) return disk;
      throw diskError;
    },

    async write(path, text, encoding) {
      let target = encoding;
      if (!target && (await local.exists(path))) {
        try {
          target = (await local.read(path)).encoding;
        } catch {
          target = undefined;
        }
      }
      const editor = target !== undefined && target !== "utf8" ? undefined : pick("writeTextFile");
      if (!editor) return local.write(path, text, target);
      const method = "fs/write_text_file";
      if (editor.silence?.silent(method) && !editor.silence.everTook(method)) return local.write(path, text, target);
      // An editor error is a failure of the write; falling back to disk would bypass the buffer.
      try {
        await askEditor(editor, method, { sessionId, path, content: text }, { signal, timeoutMs });
      } catch (err) {
        if (!(err instanceof EditorSilentError)) throw err;
        throw new Error(`${err.message}. Not written to the disk either: the editor may hold earlier writes unsaved in its buffer`);
      }
    },

    exists: (path) => local.exists(path),
  };
}
