// The modules an extension may import by pi's names: real published packages (pi-tui, pi-ai,
// pi-agent-core, typebox 1.x) resolved from one folder, and our facade for pi-coding-agent.
// Each is handed to jiti as a virtual module that loads on first use, so an extension that only
// imports types pays nothing for the packages it names.
import fs from "node:fs";
import { createRequire } from "node:module";
// pi-ai starts `import("node:fs" | "node:os" | "node:path")` while it evaluates. On Node 20 a
// synchronous require of another ESM graph that imports one of those builtins before that
// dynamic import has linked fails inside Node ("reading 'getStatus'"): pi-ai followed by
// pi-tui in one extension (todo.ts) did. Importing them here first leaves nothing to link.
// (fs and path are imported here anyway; these three cost well under a millisecond.)
import "node:os";
import path from "node:path";
import { resolveRelativeMjsDirectly } from "./fast_resolve.mjs";

/** Find `<ancestor>/node_modules/<name>` walking up from `fromDir`. */
function findPackageDir(name, fromDir) {
	let dir = fromDir;
	for (;;) {
		const candidate = path.basename(dir) === "node_modules" ? path.join(dir, name) : path.join(dir, "node_modules", name);
		if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
		const parent = path.dirname(dir);
		if (parent === dir) return undefined;
		dir = parent;
	}
}

const IMPORT_CONDITIONS = ["node", "import", "default", "require"];
const REQUIRE_CONDITIONS = ["node", "require", "default"];

function pickTarget(target, conditions) {
	if (typeof target === "string") return target;
	if (Array.isArray(target)) {
		for (const entry of target) {
			const picked = pickTarget(entry, conditions);
			if (picked) return picked;
		}
		return undefined;
	}
	if (target && typeof target === "object") {
		for (const condition of conditions) {
			if (condition in target) {
				const picked = pickTarget(target[condition], conditions);
				if (picked) return picked;
			}
		}
	}
	return undefined;
}

/**
 * Resolve a bare specifier to a file under `fromDir`, honouring the package's `exports` with the
 * `import` condition (the packages are ESM-only, so `require.resolve` refuses them), or with
 * `require` first when `require` is true (for a package that ships CommonJS too).
 */
export function resolvePackageFile(specifier, fromDir, { require = false } = {}) {
	const conditions = require ? REQUIRE_CONDITIONS : IMPORT_CONDITIONS;
	const parts = specifier.split("/");
	const nameLength = specifier.startsWith("@") ? 2 : 1;
	const name = parts.slice(0, nameLength).join("/");
	const subpath = parts.length > nameLength ? `./${parts.slice(nameLength).join("/")}` : ".";
	const dir = findPackageDir(name, fromDir);
	if (!dir) throw new Error(`Cannot find module '${specifier}'`);
	const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
	let exportsField = manifest.exports;
	if (exportsField === undefined) {
		return path.join(dir, subpath === "." ? (manifest.main ?? "index.js") : subpath);
	}
	if (typeof exportsField === "string" || Array.isArray(exportsField) || !Object.keys(exportsField).some((k) => k.startsWith("."))) {
		exportsField = { ".": exportsField };
	}
	if (exportsField[subpath] !== undefined) {
		const target = pickTarget(exportsField[subpath], conditions);
		if (target) return path.join(dir, target);
	}
	for (const [key, value] of Object.entries(exportsField)) {
		const star = key.indexOf("*");
		if (star < 0) continue;
		const prefix = key.slice(0, star);
		const suffix = key.slice(star + 1);
		if (subpath.startsWith(prefix) && subpath.endsWith(suffix) && subpath.length >= key.length - 1) {
			const target = pickTarget(value, conditions);
			if (target) return path.join(dir, target.replace("*", subpath.slice(prefix.length, subpath.length - suffix.length)));
		}
	}
	throw new Error(`Cannot find module '${specifier}'`);
}

/**
 * A module object whose members load `load()` on first access. Some questions are answered
 * without loading (see `answerUnloaded`): jiti asks them of every module an extension imports,
 * through a proxy of its own whose every property read also reads our property descriptor (a
 * proxy invariant check), so each must be answered by `get`, `has` and
 * `getOwnPropertyDescriptor` alike.
 */
export function lazyModule(load, { noDefault = false, eager = {} } = {}) {
	let loaded;
	const get = () => {
		if (loaded === undefined) loaded = load();
		return loaded;
	};
	// `{value}` for a key known before loading, else undefined (the module must load):
	// `__esModule` (jiti's interop), `default` of a package without a default export (`noDefault`;
	// jiti reads it of every import), `then` (awaiting the module object asks whether it is a
	// thenable; none of these packages exports one) and the `eager` members, which come from
	// elsewhere (pi-ai's `Type`).
	const answerUnloaded = (key) => {
		if (loaded !== undefined) return undefined;
		if (key === "__esModule") return { value: true };
		if (key === Symbol.toStringTag) return { value: "Module" };
		if (key === "then" || (key === "default" && noDefault)) return { value: undefined };
		if (Object.hasOwn(eager, key)) return { value: eager[key]() };
		return undefined;
	};
	return new Proxy(Object.create(null), {
		get(_target, key) {
			if (key === "__esModule") return true;
			if (key === Symbol.toStringTag) return "Module";
			const known = answerUnloaded(key);
			if (known) return known.value;
			return get()[key];
		},
		has(_target, key) {
			if (key === "__esModule") return true;
			const known = answerUnloaded(key);
			if (known) return known.value !== undefined;
			return key in get();
		},
		ownKeys() {
			return Reflect.ownKeys(get());
		},
		getOwnPropertyDescriptor(_target, key) {
			const known = answerUnloaded(key);
			if (known) {
				return known.value === undefined ? undefined : { value: known.value, enumerable: true, configurable: true, writable: false };
			}
			const module = get();
			if (!(key in module)) return undefined;
			return { value: module[key], enumerable: true, configurable: true, writable: false };
		},
	});
}

const PI_PACKAGES = ["pi-tui", "pi-agent-core"];
const TYPEBOX_SUBPATHS = ["", "/compile", "/value"];

/**
 * The table of virtual modules for jiti, keyed by exact specifier as pi 1.6 maps them: both
 * package scopes, only the listed subpaths (an unlisted one fails with `Cannot find module`).
 */
export function buildVirtualModules(modulesDir, facade) {
	const require = createRequire(path.join(modulesDir, "noop.js"));
	const typeboxDir = findPackageDir("typebox", modulesDir);
	if (typeboxDir) resolveRelativeMjsDirectly([typeboxDir]);
	const load = (specifier) => () => require(resolvePackageFile(specifier, modulesDir));
	const table = {};
	const alias = (name, module) => {
		table[`@earendil-works/${name}`] = module;
		table[`@mariozechner/${name}`] = module;
	};
	// None of pi's packages has a default export.
	for (const name of PI_PACKAGES) alias(name, lazyModule(load(`@earendil-works/${name}`), { noDefault: true }));
	for (const sub of TYPEBOX_SUBPATHS) {
		const module = lazyModule(load(`typebox${sub}`));
		table[`typebox${sub}`] = module;
		table[`@sinclair/typebox${sub}`] = module;
	}
	// pi's extension view of pi-ai: the compat API plus TypeBox's Type and a StringEnum helper.
	// Schemas are what most extensions take from it at load time: those two need only TypeBox,
	// so pi-ai itself (the larger import by far) loads when something else is used.
	const typebox = () => require(resolvePackageFile("typebox", modulesDir));
	const StringEnum = (values, options = {}) =>
		typebox().Type.Unsafe({
			type: "string",
			enum: [...values],
			...(options.description !== undefined ? { description: options.description } : {}),
			...(options.default !== undefined ? { default: options.default } : {}),
		});
	const aiView = lazyModule(
		() => {
			const compat = require(resolvePackageFile("@earendil-works/pi-ai/compat", modulesDir));
			return { ...compat, Type: typebox().Type, StringEnum };
		},
		{ noDefault: true, eager: { Type: () => typebox().Type, StringEnum: () => StringEnum } },
	);
	alias("pi-ai", aiView);
	alias("pi-ai/compat", aiView);
	alias("pi-ai/models", lazyModule(load("@earendil-works/pi-ai/models"), { noDefault: true }));
	alias("pi-ai/providers/all", lazyModule(load("@earendil-works/pi-ai/providers/all"), { noDefault: true }));
	alias("pi-ai/oauth", Object.freeze({ __esModule: true }));
	alias("pi-coding-agent", facade);
	return { table, require, resolve: (specifier, options) => resolvePackageFile(specifier, modulesDir, options) };
}
