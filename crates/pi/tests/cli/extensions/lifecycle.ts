// Writes each session_start and session_shutdown to the file in LIFECYCLE_LOG, and fails on
// input so the RPC error sink shows.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.LIFECYCLE_LOG ?? "lifecycle.log", `${line}\n`);
	pi.on("session_start", (event: any) => log(`start ${event.reason}`));
	pi.on("session_shutdown", (event: any) => log(`shutdown ${event.reason}`));
	pi.on("input", () => {
		throw new Error("no input today");
	});
}
