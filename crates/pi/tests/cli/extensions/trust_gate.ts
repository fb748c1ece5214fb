// A user extension deciding project trust from TRUST_ANSWER (undecided, yes, no, throw, none),
// logging what it sees to TRUST_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.TRUST_LOG!, `${line}\n`);
	log("factory gate");
	pi.on("project_trust", async (event: any, ctx: any) => {
		log(`project_trust ${event.type} ${event.cwd} mode=${ctx.mode} hasUI=${ctx.hasUI}`);
		log(`ctx ${Object.keys(ctx).join(",")} ui ${Object.keys(ctx.ui).join(",")}`);
		const picked = await ctx.ui.select("Pick", ["a", "b"]);
		const confirmed = await ctx.ui.confirm("Sure?", "really");
		const typed = await ctx.ui.input("Name?");
		log(`dialogs ${picked} ${confirmed} ${typed}`);
		ctx.ui.notify("gate was asked", "warning");
		const answer = process.env.TRUST_ANSWER ?? "undecided";
		if (answer === "throw") throw new Error("gate broke");
		if (answer === "none") return undefined;
		return { trusted: answer, remember: process.env.TRUST_REMEMBER === "1" };
	});
	pi.on("session_start", (_event: any, ctx: any) => log(`session_start trusted=${ctx.isProjectTrusted()}`));
}
