// `/bye` asks pi to shut down; session_shutdown is written to the file in LIFECYCLE_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.LIFECYCLE_LOG ?? "lifecycle.log", `${line}\n`);
	pi.on("session_shutdown", (event: any) => log(`shutdown ${event.reason}`));
	pi.registerCommand("bye", {
		description: "Shut pi down",
		handler: async (_args: string, ctx: any) => {
			log("bye");
			ctx.shutdown();
		},
	});
}
