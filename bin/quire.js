#!/usr/bin/env node
// Entry point of the `quire` command: loads the TypeScript CLI through tsx.
import { register } from "tsx/esm/api";

register();
await import("../server/cli.ts");
