// Writes what `ctx.ui.theme` makes of a few tokens and styles to THEME_LOG at session start.
import fs from "node:fs";

export default function (pi: any) {
	pi.on("session_start", async (_event: any, ctx: any) => {
		const theme = ctx.ui.theme;
		const lines = [
			...["accent", "border", "success", "error", "warning", "muted", "dim", "text", "mdHeading", "toolTitle"].map(
				(token) => `fg ${token} ${JSON.stringify(theme.fg(token, "x"))}`,
			),
			...["customMessageBg", "userMessageBg", "toolErrorBg"].map((token) => `bg ${token} ${JSON.stringify(theme.bg(token, "y"))}`),
			`styles ${JSON.stringify([theme.bold("b"), theme.italic("i"), theme.underline("u")])}`,
		];
		fs.writeFileSync(process.env.THEME_LOG ?? "theme.log", lines.join("\n") + "\n");
	});
}
