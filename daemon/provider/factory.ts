/**
 * The daemon's model factory: a model reference and a window's environment to a streaming chat
 * model, with the configuration as it is now (retries, idle bound, effort parameters) and the key
 * from the window, else the daemon's own sources (registry.ts).
 */
import { RpcError } from "../../shared/jsonrpc.js";
import type { DaemonConfig } from "../config/config.js";
import { effortParams } from "./effort.js";
import { OpenAIChatModel } from "./openai-chat.js";
import { type KeySources, resolveEndpoint, resolveModelRef } from "./registry.js";
import type { ChatModel } from "./types.js";

export type ModelFactory = (ref: string, windowEnv: Readonly<Record<string, string | undefined>>, effort: string) => ChatModel;

export function modelFactory(config: () => DaemonConfig, keys: KeySources): ModelFactory {
  return (ref, windowEnv, effort) => {
    const choice = resolveModelRef(config(), ref);
    if (!choice) throw RpcError.invalidParams(`model: "${ref}" is not a configured model`);
    const extra = effortParams(choice.provider.name, effort);
    const { modelRetry: r, modelIdleTimeoutSeconds } = config();
    const policy = { retries: r.retries, baseMs: r.baseSeconds * 1000, maxMs: r.maxSeconds * 1000, idleMs: modelIdleTimeoutSeconds * 1000 };
    return new OpenAIChatModel(choice.ref, choice.model, resolveEndpoint(choice, windowEnv, keys), () => extra, policy);
  };
}
