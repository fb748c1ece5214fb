// V8's top optimizing compiler (TurboFan), off while the host starts and on again afterwards.
//
// Start-up runs Node's module loader over hundreds of modules (TypeBox alone is about 700),
// which makes the loader's own functions hot enough for TurboFan; compiling them costs about
// 7 MB of peak memory and saves nothing in a phase that ends before the code pays off. V8's
// other tiers run meanwhile, and extension code that runs long after start-up gets TurboFan as
// usual. The flag is known to the V8 of Node 20 to 24 (for one it does not know, V8 would print
// an error); a Node started with its own choice of compilers keeps it.
import v8 from "node:v8";

let paused = false;

/** Turn TurboFan off for start-up, where that is known to be safe. */
export function pauseOptimizer() {
	const major = Number(process.versions.node.split(".")[0]);
	const chosen = /jitless|turbofan|\bopt\b|no-opt|lite-mode|maglev|sparkplug/.test(
		`${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`,
	);
	if (major < 20 || major > 24 || chosen) return;
	v8.setFlagsFromString("--no-turbofan");
	paused = true;
}

/** Turn TurboFan on again (once start-up is over); nothing when it was not paused. */
export function resumeOptimizer() {
	if (!paused) return;
	paused = false;
	v8.setFlagsFromString("--turbofan");
}

/** Whether start-up still runs without TurboFan. */
export function optimizerPaused() {
	return paused;
}
