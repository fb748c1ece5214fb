// Relative imports inside TypeBox resolved without Node's general resolver (Node 22.15+).
// TypeBox 1.x is about 700 small ES modules whose imports are all relative `.mjs` paths. Node
// resolves each one by checking the file, walking its real path and looking up the nearest
// package.json for its format, which costs more than evaluating the modules. Inside a package
// folder given by its real path (npm packages hold no symlinks), a relative `.mjs` specifier
// names exactly that file, and `.mjs` is always an ES module.
import fs from "node:fs";
import module from "node:module";
import { pathToFileURL } from "node:url";

/**
 * Resolve relative `.mjs` imports made from files under `dirs` directly. Returns false where
 * Node has no synchronous module hooks (before 22.15) and nothing changes.
 */
export function resolveRelativeMjsDirectly(dirs) {
	if (typeof module.registerHooks !== "function") return false;
	const prefixes = [];
	for (const dir of dirs) {
		try {
			prefixes.push(`${pathToFileURL(fs.realpathSync(dir)).href}/`);
		} catch {
			// A folder that is not there keeps Node's own resolution.
		}
	}
	if (prefixes.length === 0) return false;
	const inside = (url) => prefixes.some((prefix) => url.startsWith(prefix));
	module.registerHooks({
		resolve(specifier, context, nextResolve) {
			const parent = context.parentURL;
			if (
				parent !== undefined &&
				(specifier.startsWith("./") || specifier.startsWith("../")) &&
				specifier.endsWith(".mjs") &&
				inside(parent)
			) {
				const url = new URL(specifier, parent).href;
				if (inside(url)) return { url, format: "module", shortCircuit: true };
			}
			return nextResolve(specifier, context);
		},
	});
	return true;
}
