/**
 * zod schemas for the ACP v1 messages the daemon handles, checked at the edge so handlers get
 * typed values. Field names and shapes follow the official schema (schema.json, SDK 2.4.0); unknown
 * fields pass through untouched (`_meta` and future additions), as the protocol asks receivers to be
 * lenient.
 */
import { z } from "zod";

const meta = z.record(z.string(), z.unknown()).nullish();

export const SessionId = z.string().min(1, "sessionId must not be empty");

const Annotations = z
  .object({
    audience: z.array(z.string()).nullish(),
    lastModified: z.string().nullish(),
    priority: z.number().nullish(),
  })
  .passthrough()
  .nullish();

export const TextContent = z.object({ type: z.literal("text"), text: z.string(), annotations: Annotations, _meta: meta }).passthrough();
export const ImageContent = z
  .object({ type: z.literal("image"), data: z.string(), mimeType: z.string(), uri: z.string().nullish(), annotations: Annotations, _meta: meta })
  .passthrough();
export const AudioContent = z.object({ type: z.literal("audio"), data: z.string(), mimeType: z.string(), annotations: Annotations, _meta: meta }).passthrough();
export const ResourceLink = z
  .object({
    type: z.literal("resource_link"),
    uri: z.string(),
    name: z.string(),
    mimeType: z.string().nullish(),
    title: z.string().nullish(),
    description: z.string().nullish(),
    size: z.number().nullish(),
    annotations: Annotations,
    _meta: meta,
  })
  .passthrough();
export const EmbeddedResource = z
  .object({
    type: z.literal("resource"),
    resource: z.union([
      z.object({ uri: z.string(), text: z.string(), mimeType: z.string().nullish(), _meta: meta }).passthrough(),
      z.object({ uri: z.string(), blob: z.string(), mimeType: z.string().nullish(), _meta: meta }).passthrough(),
    ]),
    annotations: Annotations,
    _meta: meta,
  })
  .passthrough();

export const ContentBlock = z.discriminatedUnion("type", [TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]);
export type ContentBlock = z.infer<typeof ContentBlock>;

const EnvVariable = z.object({ name: z.string(), value: z.string() }).passthrough();
const HttpHeader = z.object({ name: z.string(), value: z.string() }).passthrough();

export const McpServerStdio = z
  .object({
    name: z.string(),
    command: z.string(),
    args: z.array(z.string()).default([]),
    env: z.union([z.array(EnvVariable), z.record(z.string(), z.string())]).default([]),
  })
  .passthrough();
export const McpServerHttp = z
  .object({
    type: z.enum(["http", "sse"]),
    name: z.string(),
    url: z.string(),
    headers: z.union([z.array(HttpHeader), z.record(z.string(), z.string())]).default([]),
  })
  .passthrough();
export const McpServer = z.union([McpServerHttp, McpServerStdio]);
export type McpServer = z.infer<typeof McpServer>;

const absolutePath = (field: string) => z.string().refine((p) => p.startsWith("/"), { message: `${field} must be an absolute path` });

export const InitializeRequest = z
  .object({
    protocolVersion: z.number().int().nonnegative(),
    clientCapabilities: z
      .object({
        fs: z.object({ readTextFile: z.boolean().nullish(), writeTextFile: z.boolean().nullish() }).passthrough().nullish(),
        terminal: z.boolean().nullish(),
        auth: z.object({ terminal: z.boolean().nullish() }).passthrough().nullish(),
        session: z.record(z.string(), z.unknown()).nullish(),
        elicitation: z.record(z.string(), z.unknown()).nullish(),
        _meta: meta,
      })
      .passthrough()
      .nullish(),
    clientInfo: z.object({ name: z.string(), version: z.string(), title: z.string().nullish() }).passthrough().nullish(),
    _meta: meta,
  })
  .passthrough();
export type InitializeRequest = z.infer<typeof InitializeRequest>;
export type ClientCapabilities = NonNullable<InitializeRequest["clientCapabilities"]>;

export const AuthenticateRequest = z.object({ methodId: z.string(), _meta: meta }).passthrough();

export const LogoutRequest = z.object({ _meta: meta }).passthrough();

export const NewSessionRequest = z
  .object({
    cwd: absolutePath("cwd"),
    mcpServers: z
      .array(McpServer)
      .nullish()
      .transform((v) => v ?? []),
    additionalDirectories: z
      .array(absolutePath("additionalDirectories[]"))
      .nullish()
      .transform((v) => v ?? []),
    _meta: meta,
  })
  .passthrough();

export const LoadSessionRequest = NewSessionRequest.extend({ sessionId: SessionId });
export const ResumeSessionRequest = LoadSessionRequest;

export const ListSessionsRequest = z.object({ cwd: absolutePath("cwd").nullish(), cursor: z.string().nullish(), _meta: meta }).passthrough();

export const SessionIdRequest = z.object({ sessionId: SessionId, _meta: meta }).passthrough();

/**
 * `messageId` is not in the schema (the message-id RFD's draft let the client name its message; the
 * stable protocol has agents make ids): taken when it is a UUID, anything else is left out.
 */
export const PromptRequest = z
  .object({
    sessionId: SessionId,
    prompt: z.array(ContentBlock),
    messageId: z.string().uuid().nullish().catch(undefined),
    _meta: meta,
  })
  .passthrough();

/**
 * session/fork (unstable v1). Where to cut: `_meta["reasonix.io"].messageId`, the message the fork
 * ends with (absent: everything so far).
 */
export const ForkSessionRequest = NewSessionRequest.extend({
  sessionId: SessionId,
  _meta: z
    .object({
      "reasonix.io": z
        .object({ messageId: z.string().min(1, "messageId must not be empty").nullish() })
        .passthrough()
        .nullish(),
    })
    .passthrough()
    .nullish(),
});

export const SetModeRequest = z.object({ sessionId: SessionId, modeId: z.string(), _meta: meta }).passthrough();

export const SetConfigOptionRequest = z
  .object({
    sessionId: SessionId,
    configId: z.string(),
    value: z.union([z.string(), z.boolean()]),
    type: z.string().nullish(),
    _meta: meta,
  })
  .passthrough();

/** Editor answers to our requests. */
export const RequestPermissionResponse = z
  .object({
    outcome: z.discriminatedUnion("outcome", [
      z.object({ outcome: z.literal("cancelled") }).passthrough(),
      z.object({ outcome: z.literal("selected"), optionId: z.string() }).passthrough(),
    ]),
  })
  .passthrough();
export const ReadTextFileResponse = z.object({ content: z.string() }).passthrough();
export const CreateTerminalResponse = z.object({ terminalId: z.string() }).passthrough();
export const TerminalOutputResponse = z
  .object({
    output: z.string(),
    truncated: z.boolean(),
    exitStatus: z.object({ exitCode: z.number().nullish(), signal: z.string().nullish() }).passthrough().nullish(),
  })
  .passthrough();
export const WaitForExitResponse = z.object({ exitCode: z.number().nullish(), signal: z.string().nullish() }).passthrough();
