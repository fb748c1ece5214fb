// One `ctx.modelRegistry.complete` with the session's model at session start; its stop reason
// and text go to COMPLETE_LOG.
import fs from "node:fs";

export default function (pi: any) {
	pi.on("session_start", async (_event: any, ctx: any) => {
		const context = { messages: [{ role: "user", content: [{ type: "text", text: "ping" }], timestamp: Date.now() }] };
		const reply = await ctx.modelRegistry.complete(ctx.model, context, { maxTokens: 32 });
		const text = reply.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("");
		fs.writeFileSync(process.env.COMPLETE_LOG ?? "complete.log", `${reply.stopReason} ${text}\n`);
	});
}
