/**
 * The shim <-> daemon wire contract, separate from the ACP protocol version the editor negotiates.
 * A different WIRE_MAJOR is refused at the WebSocket upgrade, before any ACP byte flows.
 */
export const WIRE_MAJOR = 1;
export const PACKAGE_VERSION = "0.1.0";

export const HEADER_WIRE = "x-reasonix-wire";
export const HEADER_BUILD = "x-reasonix-build";
export const HEADER_SHIM_PID = "x-reasonix-shim-pid";
export const HEADER_ENV = "x-reasonix-env";
export const HEADER_MODEL = "x-reasonix-model";
/**
 * The window's umask in octal (`0022`): the session it creates gives it to its commands and to the
 * files its tools create. Absent (a plain ACP client on the TCP listener), the daemon uses 022.
 */
export const HEADER_UMASK = "x-reasonix-umask";

/** Room for a window's whole environment in the upgrade request (Node's default is 16 KiB). */
export const MAX_UPGRADE_HEADER_BYTES = 1024 * 1024;
