// Writes what `ctx.ui.theme` gives for tokens in and out of their slot, and `style()`, to
// THEME_LOG at session start.
import fs from "node:fs";

export default function (pi: any) {
	pi.on("session_start", async (_event: any, ctx: any) => {
		const theme = ctx.ui.theme;
		const shown = (f: () => string) => {
			try {
				return JSON.stringify(f());
			} catch (error: any) {
				return `throws ${error.message}`;
			}
		};
		const lines = [
			...["selectedBg", "searchMatchBg", "userMessageBg", "customMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg"].map(
				(token) => `bg ${token} ${shown(() => theme.bg(token, "y"))} ${shown(() => theme.getBgAnsi(token))}`,
			),
			...["accent", "muted", "text", "searchMatchText", "thinkingMax"].map(
				(token) => `fg ${token} ${shown(() => theme.fg(token, "x"))} ${shown(() => theme.getFgAnsi(token))}`,
			),
			`bg of a foreground ${shown(() => theme.bg("accent", "z"))}`,
			`fg of a background ${shown(() => theme.fg("selectedBg", "z"))}`,
			`style ${shown(() => theme.style("s", { fg: "accent", bg: "toolErrorBg" }))}`,
			`style faint ${shown(() => theme.style("s", { fg: "muted", bold: true, italic: true }))}`,
		];
		fs.writeFileSync(process.env.THEME_LOG ?? "theme.log", lines.join("\n") + "\n");
	});
}
