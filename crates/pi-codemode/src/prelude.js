// Evaluated in the sandbox before a script: builds the script's globals on top of four host
// functions that it keeps in this closure, so the script itself never sees them.
//
// host.call(id, name, argsJson)     a nested tool call; answered later through settle()
// host.global(id, name, argsJson)   a discovery helper (searchTools, describeTool, ...)
// host.output(kind, data, mimeType) "text" / "console" text, or "image" base64 data
// host.done(ok, payload, writes)    the end: the returned value's text or the error as JSON,
//                                    and the store writes of a successful script
//
// Evaluates to a function of (host, toolsJson, globalsJson, storeJson) that returns
// { settle(id, ok, payloadJson), run(main) }.
(function (host, toolsJson, globalsJson, storeJson) {
	"use strict";
	const stringify = JSON.stringify;
	const parse = JSON.parse;
	const ErrorType = Error;
	const TypeErrorType = TypeError;
	const RangeErrorType = RangeError;
	const MAX_VALUE_CHARS = 262144;
	const MAX_STORE_CHARS = 1048576;
	const MAX_OUTPUT_CHARS = 16777216;
	const MAX_OUTPUT_ITEMS = 100000;
	const waiting = new Map();
	let nextCall = 1;
	let ended = false;
	// Thrown by exit() so the script unwinds after it already reported success.
	const EXIT = Object.freeze({ exit: true });

	function end(ok, payload, writes) {
		if (ended) return;
		ended = true;
		host.done(ok, payload, writes);
	}

	// "Name: message" followed by the stack frames of the script (never this file's).
	function errorText(error) {
		let head;
		try {
			head = error.message ? String(error.name) + ": " + String(error.message) : String(error.name);
		} catch (_) {
			head = "Error";
		}
		const frames = typeof error.stack === "string"
			? error.stack.split("\n").filter((line) => line.trim() !== "" && line.indexOf("codemode-prelude.js") === -1)
			: [];
		return [head].concat(frames).join("\n");
	}

	function errorJson(error) {
		try {
			if (error instanceof ErrorType) {
				return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
			}
			return stringify({ message: formatValue(error) });
		} catch (_) {
			return stringify({ message: "The script threw a value that cannot be described" });
		}
	}

	// Strings as they are, errors as their text, numbers as written, the rest as JSON.
	function formatValue(value) {
		if (typeof value === "string") return value;
		if (value instanceof ErrorType) return errorText(value);
		if (value === undefined || value === null || typeof value === "number" || typeof value === "boolean" ||
			typeof value === "bigint" || typeof value === "symbol") {
			return String(value);
		}
		try {
			const json = stringify(value);
			return json === undefined ? String(value) : json;
		} catch (_) {
			return String(value);
		}
	}

	function requester(send, name, spread) {
		return function (...args) {
			return new Promise((resolve, reject) => {
				let json;
				try {
					const value = spread ? args : args[0];
					json = value === undefined ? undefined : stringify(value);
				} catch (error) {
					reject(error);
					return;
				}
				const id = nextCall++;
				waiting.set(id, { resolve, reject });
				send(id, name, json);
			});
		};
	}

	// A member that does not exist fails with the close names instead of "not a function";
	// `name in object` still answers.
	const squash = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
	function guarded(target, label, names, hint) {
		return new Proxy(target, {
			get(object, property, receiver) {
				if (typeof property !== "string" || property in object || property === "then" || property === "toJSON" ||
					property in Object.prototype) {
					return Reflect.get(object, property, receiver);
				}
				const wanted = squash(property);
				let near = names.filter((name) => squash(name) === wanted);
				if (near.length === 0 && wanted !== "") {
					near = names.filter((name) => squash(name).includes(wanted) || wanted.includes(squash(name)));
				}
				let message = label + "." + property + " does not exist.";
				if (near.length > 0) {
					message += " Did you mean " + near.slice(0, 5).map((name) => label + "." + name).join(", ") + "?";
				} else if (names.length <= 20) {
					message += " Available: " + names.join(", ") + ".";
				}
				if (hint) message += " " + hint;
				message += ' Check for a member with "' + property + '" in ' + label + ".";
				throw new TypeErrorType(message);
			},
		});
	}

	const tools = Object.create(null);
	const listed = [];
	for (const { name, id, description } of parse(toolsJson)) {
		const call = requester(host.call, name, false);
		if (!(id in tools)) {
			tools[id] = call;
			listed.push(Object.freeze({ name: id, description }));
		}
		if (!(name in tools)) tools[name] = call;
	}
	Object.freeze(tools);
	Object.freeze(listed);
	const define = (name, value) =>
		Object.defineProperty(globalThis, name, { value, enumerable: true, writable: false, configurable: false });
	define(
		"tools",
		guarded(tools, "tools", listed.map((tool) => tool.name),
			"ALL_TOOLS lists every tool; searchTools(query) finds tools by topic."),
	);
	define("ALL_TOOLS", listed);
	// "models.classify" and the like become members of one frozen `models` object.
	const groups = new Map();
	for (const name of parse(globalsJson)) {
		const dot = name.indexOf(".");
		if (dot === -1) {
			define(name, requester(host.global, name, true));
			continue;
		}
		const group = name.slice(0, dot);
		if (!groups.has(group)) groups.set(group, {});
		groups.get(group)[name.slice(dot + 1)] = requester(host.global, name, true);
	}
	for (const [group, members] of groups) define(group, Object.freeze(members));

	// The store: key -> JSON text, sizes counted in characters of key and JSON.
	const stored = new Map(Object.entries(parse(storeJson)));
	const writes = new Map();
	let storedChars = 0;
	for (const [key, json] of stored) storedChars += key.length + json.length;
	const STORE_HINT = "Keep store() for small state such as IDs, cursors or summaries; keep large data in variables or write it to a file with a tool.";
	function checkKey(fn, key) {
		if (typeof key !== "string") throw new TypeErrorType(fn + "() key must be a string");
	}
	define("store", function store(key, value) {
		checkKey("store", key);
		const before = stored.has(key) ? key.length + stored.get(key).length : 0;
		if (value === undefined) {
			stored.delete(key);
			storedChars -= before;
			writes.set(key, undefined);
			return;
		}
		let json;
		try {
			json = stringify(value);
		} catch (error) {
			throw new TypeErrorType("store(" + stringify(key) + "): the value cannot be written as JSON: " + formatValue(error));
		}
		if (json === undefined) throw new TypeErrorType("store(" + stringify(key) + "): the value cannot be written as JSON");
		if (json.length > MAX_VALUE_CHARS) {
			throw new RangeErrorType("store(" + stringify(key) + "): the value has " + json.length +
				" characters of JSON, over the limit of " + MAX_VALUE_CHARS + ". " + STORE_HINT);
		}
		const after = storedChars - before + key.length + json.length;
		if (after > MAX_STORE_CHARS) {
			throw new RangeErrorType("store is full: the values would pass " + MAX_STORE_CHARS +
				" characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT);
		}
		stored.set(key, json);
		storedChars = after;
		writes.set(key, json);
	});
	define("load", function load(key) {
		checkKey("load", key);
		const json = stored.get(key);
		return json === undefined ? undefined : parse(json);
	});
	function writesJson() {
		const list = [];
		for (const [key, json] of writes) list.push(json === undefined ? [key] : [key, json]);
		return stringify(list);
	}

	let outputChars = 0;
	let outputItems = 0;
	function emit(kind, data, mimeType) {
		if (ended) return;
		outputChars += data.length;
		outputItems += 1;
		if (outputChars > MAX_OUTPUT_CHARS || outputItems > MAX_OUTPUT_ITEMS) {
			const error = new RangeErrorType("script output passed the limit of " + MAX_OUTPUT_CHARS +
				" characters or " + MAX_OUTPUT_ITEMS + " text(), image() and console calls. Print a summary instead, or write large data to a file with a tool.");
			end(false, errorJson(error));
			throw error;
		}
		host.output(kind, data, mimeType);
	}
	define("text", function text(value) {
		emit("text", formatValue(value));
	});
	const consoleLine = (...args) => emit("console", args.map(formatValue).join(" "));
	define("console", Object.freeze({ log: consoleLine, info: consoleLine, warn: consoleLine, error: consoleLine, debug: consoleLine }));

	const IMAGE_USAGE = 'image() takes a base64 data: URL, an object with image_url, or an image block { type: "image", data, mimeType }';
	// What the first bytes of the base64 data say the image is.
	const SIGNATURES = [
		["image/png", /^iVBORw0KGg/],
		["image/jpeg", /^\/9j\//],
		["image/gif", /^R0lGOD[dl]h/],
		["image/webp", /^UklG.{6}..(?:RUJQ|V0VCUA)/],
	];
	function imageData(value) {
		let url;
		if (typeof value === "string") {
			url = value;
		} else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
			if (value.image_url !== undefined) {
				if (typeof value.image_url !== "string") throw new TypeErrorType(IMAGE_USAGE);
				url = value.image_url;
			} else if (value.type === "image") {
				if (typeof value.data !== "string" || value.data === "") throw new TypeErrorType("image(): the image block has no data");
				url = value.data.toLowerCase().startsWith("data:") ? value.data : "data:;base64," + value.data;
			} else if (typeof value.type === "string") {
				throw new TypeErrorType('image() only takes image blocks, got "' + value.type + '"');
			} else {
				throw new TypeErrorType(IMAGE_USAGE);
			}
		} else {
			throw new TypeErrorType(IMAGE_USAGE);
		}
		if (!url.toLowerCase().startsWith("data:")) {
			throw new TypeErrorType("image() only shows inline base64 data: URLs; remote URLs are not fetched");
		}
		const comma = url.indexOf(",");
		if (comma === -1 || !url.slice(0, comma).toLowerCase().endsWith(";base64")) {
			throw new TypeErrorType("image() expects base64 data (data:<type>;base64,<data>)");
		}
		const data = url.slice(comma + 1).replace(/\s+/g, "");
		const found = SIGNATURES.find(([, pattern]) => pattern.test(data));
		if (!found) throw new TypeErrorType("image() accepts PNG, JPEG, GIF and WebP images");
		return [data, found[0]];
	}
	define("image", function image(value) {
		const [data, mimeType] = imageData(value);
		emit("image", data, mimeType);
	});
	define("exit", function exit() {
		end(true, undefined, writesJson());
		throw EXIT;
	});

	return Object.freeze({
		settle(id, ok, payload) {
			const entry = waiting.get(id);
			if (!entry) return;
			waiting.delete(id);
			if (ok) {
				entry.resolve(payload === undefined ? undefined : parse(payload));
			} else {
				entry.reject(new ErrorType(payload));
			}
		},
		run(main) {
			const finish = (value) => {
				if (value === undefined) {
					end(true, undefined, writesJson());
				} else {
					end(true, formatValue(value), writesJson());
				}
			};
			const fail = (error) => {
				if (error === EXIT) return;
				end(false, errorJson(error));
			};
			let promise;
			try {
				promise = main();
			} catch (error) {
				fail(error);
				return;
			}
			promise.then(finish, fail);
		},
	});
})
