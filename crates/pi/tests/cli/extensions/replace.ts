// Session replacement from commands: `/fresh` (ctx.newSession with parentSession, setup and
// withSession), `/branch` (ctx.fork before the first prompt), `/copy` (ctx.fork at the leaf),
// `/goto <file>` (ctx.switchSession) and `/refresh` (ctx.reload). Every replacement event and
// each command's outcome is written, one line each, to the file in REPLACE_LOG; with
// REPLACE_VETO set, session_before_switch and session_before_fork cancel.
import { appendFileSync } from "node:fs";

const loaded = Date.now();

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.REPLACE_LOG ?? "replace.log", `${line}\n`);
	const file = (path: unknown) => (typeof path === "string" ? (path.endsWith(".jsonl") ? "file" : "other") : "none");
	const veto = () => (process.env.REPLACE_VETO ? { cancel: true } : undefined);

	pi.on("session_before_switch", (event: any) => {
		log(`before_switch reason=${event.reason} target=${file(event.targetSessionFile)}`);
		return veto();
	});
	pi.on("session_before_fork", (event: any) => {
		log(`before_fork position=${event.position} entry=${typeof event.entryId}`);
		return veto();
	});
	pi.on("session_shutdown", (event: any) => log(`shutdown reason=${event.reason} target=${file(event.targetSessionFile)}`));
	pi.on("session_start", (event: any, ctx: any) =>
		log(
			`start reason=${event.reason} previous=${file(event.previousSessionFile)} entries=${ctx.sessionManager.getEntries().length}`,
		),
	);
	pi.on("resources_discover", (event: any) => log(`discover reason=${event.reason}`));

	// What a replaced-session ctx sees, and whether the old command ctx went stale.
	const after = (name: string, old: any) => async (ctx: any) => {
		let stale = "no";
		try {
			void old.cwd;
			old.sessionManager.getEntries();
		} catch (error: any) {
			stale = String(error?.message ?? error).startsWith("This extension ctx is stale") ? "yes" : "other";
		}
		const entries = ctx.sessionManager.getEntries();
		if (setupIds.length > 0) {
			const kept = setupIds.map((id) => entries.find((e: any) => e.id === id)?.type ?? "missing");
			log(`${name} setup entries kept=${kept.join(",")}`);
		}
		log(
			`${name} withSession entries=${entries.length} types=${entries.map((e: any) => e.type).join(",")} stale=${stale} ` +
				`sameFile=${ctx.sessionManager.getSessionFile() === old_file}`,
		);
	};
	let old_file: string | undefined;
	let setupIds: string[] = [];

	pi.registerCommand("fresh", {
		description: "a new session seeded with one message",
		handler: async (_args: string, ctx: any) => {
			old_file = ctx.sessionManager.getSessionFile();
			const result = await ctx.newSession({
				parentSession: old_file,
				setup: async (sm: any) => {
					log(`setup entries=${sm.getEntries().length}`);
					const message = sm.appendMessage({ role: "user", content: [{ type: "text", text: "seeded" }], timestamp: Date.now() });
					const note = sm.appendCustomEntry("replace-note", { from: "setup" });
					const label = sm.appendLabelChange(message, "seed");
					setupIds = [message, note, label];
					const shaped = setupIds.every((id) => typeof id === "string" && /^[0-9a-f]{8}$/.test(id));
					log(
						`setup ids=${shaped} leaf=${sm.getLeafId() === label} parent=${sm.getEntry(note)?.parentId === message} ` +
							`label=${sm.getLabel(message)} entries=${sm.getEntries().length}`,
					);
					try {
						sm.appendLabelChange("nope0000", "x");
					} catch (error: any) {
						log(`setup bad label: ${error?.message ?? error}`);
					}
				},
				withSession: after("fresh", ctx),
			});
			log(`fresh result=${JSON.stringify(result)}`);
		},
	});

	pi.registerCommand("branch", {
		description: "fork before the last prompt",
		handler: async (_args: string, ctx: any) => {
			old_file = ctx.sessionManager.getSessionFile();
			const prompts = ctx.sessionManager.getEntries().filter((e: any) => e.type === "message" && e.message.role === "user");
			const last = prompts[prompts.length - 1];
			const result = await ctx.fork(last.id, { withSession: after("branch", ctx) });
			log(`branch result=${JSON.stringify(result)}`);
		},
	});

	pi.registerCommand("copy", {
		description: "clone the current branch",
		handler: async (_args: string, ctx: any) => {
			old_file = ctx.sessionManager.getSessionFile();
			const result = await ctx.fork(ctx.sessionManager.getLeafId(), { position: "at", withSession: after("copy", ctx) });
			log(`copy result=${JSON.stringify(result)}`);
		},
	});

	pi.registerCommand("goto", {
		description: "switch to another session file",
		handler: async (args: string, ctx: any) => {
			old_file = ctx.sessionManager.getSessionFile();
			const result = await ctx.switchSession(args.trim(), { withSession: after("goto", ctx) });
			log(`goto result=${JSON.stringify(result)}`);
		},
	});

	pi.registerCommand("refresh", {
		description: "reload the runtime",
		handler: async (_args: string, ctx: any) => {
			const result = await ctx.reload();
			log(`refresh result=${JSON.stringify(result ?? null)} module=${Date.now() >= loaded ? "kept" : "?"}`);
		},
	});
}
