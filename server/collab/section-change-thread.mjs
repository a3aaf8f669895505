// Entry of the section-change worker thread (section-change.ts): a thread starts without the main thread's module
// hooks, so it loads its TypeScript through tsx, as bin/quire.js loads the server.
import { register } from "tsx/esm/api";

register();
await import("./section-change-thread.ts");
