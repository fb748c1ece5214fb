// `pi.exec` in every shape 1.6 answers (output, exit codes, a missing program, cwd, timeout,
// a signal, abort) and `pi.events` (unsubscribe, a failing handler), written to EXEC_OUT.
import fs from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
	pi.registerCommand("exectest", {
		description: "exec",
		handler: async (_args, ctx) => {
			const out: any[] = [];
			const run = async (label: string, cmd: string, args: string[], opts?: any) => {
				const started = Date.now();
				try {
					const r: any = await pi.exec(cmd, args, opts);
					out.push({ label, ...r, slow: Date.now() - started > 1500 });
				} catch (e: any) {
					out.push({ label, threw: String(e?.message ?? e) });
				}
			};
			await run("ok", "sh", ["-c", "echo out; echo err >&2"]);
			await run("exit3", "sh", ["-c", "exit 3"]);
			await run("missing", "no-such-program-xyz", []);
			await run("cwd", "pwd", [], { cwd: "/tmp" });
			await run("defaultcwd", "pwd", []);
			await run("timeout", "sleep", ["5"], { timeout: 300 });
			await run("selfkill", "sh", ["-c", "kill -TERM $$"]);
			const ac = new AbortController();
			setTimeout(() => ac.abort(), 200);
			await run("abort", "sleep", ["5"], { signal: ac.signal });
			await run("noargs", "true");
			// the event bus
			const seen: any[] = [];
			const off = pi.events.on("chan", (d: any) => { seen.push(d); });
			pi.events.on("chan", () => { throw new Error("bus handler failed"); });
			pi.events.emit("chan", { n: 1 });
			off();
			pi.events.emit("chan", { n: 2 });
			pi.events.emit("other", 3);
			out.push({ label: "bus", seen });
			fs.writeFileSync(process.env.EXEC_OUT!, JSON.stringify(out, null, 1));
		},
	});
}
