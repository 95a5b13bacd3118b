// The hardening files `npm run soak` runs at length (soak.js); `npm test` runs them with small bounds
// and `npm run test:fast` leaves them out (run.js --fast). Filters on the dist path, as run.js takes them.
export const SOAK_FILES = ["e2e/fuzz", "e2e/crash-matrix", "e2e/load"];
