/**
 * `npm run build`, after tsc: the ACP schema's validators the tests' wire checker uses
 * (test/support/acp-schema.ts), compiled once here with Ajv's standalone code instead of in every
 * test process. Written to dist/test/support/acp-validators.cjs with the digest of the schema they
 * came from; the checker compiles at run time whenever that digest does not match. Test-only: the
 * package's `files` leaves dist/test out.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import standalone from "ajv/dist/standalone/index.js";
import { acpAjv, defRef, defaultSchemaPath, methodDefs, schemaDigest } from "../dist/test/support/acp-schema.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const text = readFileSync(defaultSchemaPath(), "utf8");
const schema = JSON.parse(text);
const ajv = acpAjv(schema, { source: true });
const code = standalone.default(ajv, Object.fromEntries(methodDefs(schema).map((name) => [name, defRef(name)])));
writeFileSync(join(ROOT, "dist", "test", "support", "acp-validators.cjs"), `${code}\nexports.schemaDigest = ${JSON.stringify(schemaDigest(text))};\n`);
