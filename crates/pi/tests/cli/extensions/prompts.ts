// `/ask` opens a confirm dialog that nobody answers (it times out), inside an input dialog's
// wait; the ui_prompt events around them go to the file in PROMPT_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.PROMPT_LOG ?? "prompts.log", `${line}\n`);
	pi.on("ui_prompt_start", (event: any) => log(`start ${event.reason} ${event.kind} ${event.title ?? "-"}`));
	pi.on("ui_prompt_end", (event: any) => log(`end ${event.reason} ${event.kind} ${event.title ?? "-"}`));
	pi.registerCommand("ask", {
		description: "Ask twice",
		handler: async (_args: string, ctx: any) => {
			const sure = await ctx.ui.confirm("Proceed?", "Really?", { timeout: 50 });
			log(`answer ${sure}`);
			await ctx.ui.input("Name?", "someone", { timeout: 50 });
			log("done");
		},
	});
}
