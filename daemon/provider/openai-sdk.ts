/**
 * What the daemon takes from the openai SDK at run time, in one module. The build bundles it into a
 * file of its own (dist/vendor/openai.cjs, scripts/bundle.js) that the daemon loads at its first
 * model request: the package's hundreds of files cost that request some 60 ms of resolving and
 * compiling, the one bundled file about 15.
 */
export { APIError, default as OpenAI } from "openai";
