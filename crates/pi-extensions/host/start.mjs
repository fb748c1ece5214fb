// The host's entry: pauses V8's top optimizing compiler for start-up (optimizer.mjs), then
// loads the host itself (main.mjs), which resumes it once the first extensions have loaded.
// main.mjs is imported only now, so that nothing of the host has run before the pause.
import { pauseOptimizer } from "./optimizer.mjs";

pauseOptimizer();
await import("./main.mjs");
