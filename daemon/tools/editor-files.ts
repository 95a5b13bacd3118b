/**
 * File access routed through the editor when it offered `fs/*`, so reads see unsaved buffers and
 * writes land in them. A file that is not valid UTF-8 never goes through the editor (ACP's file
 * methods are text-only) and keeps its bytes and encoding on disk.
 */
import { ReadTextFileResponse } from "../../shared/acp-schemas.js";
import { askEditor, editorTimeoutMs } from "./editor-request.js";
import type { EditorPicker, FileAccess, TextEncodingName } from "./types.js";

/** The bound is generous (editorTimeoutSeconds, 60 s): an editor answers from its buffers at once. */
export function routedFiles(sessionId: string, pick: EditorPicker, local: FileAccess, signal: AbortSignal, timeoutMs = editorTimeoutMs()): FileAccess {
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
      // An editor error is a failure of the write; falling back to disk would bypass the buffer.
      await askEditor(editor, "fs/write_text_file", { sessionId, path, content: text }, { signal, timeoutMs });
    },

    exists: (path) => local.exists(path),
  };
}
