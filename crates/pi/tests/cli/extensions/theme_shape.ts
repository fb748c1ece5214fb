// Writes the shape of `ctx.ui.theme` to THEME_LOG at session start: its colour depth, its
// colour objects (numbers to 9 places) and the escape sequences of an RGB and an indexed token.
import fs from "node:fs";

export default function (pi: any) {
	pi.on("session_start", async (_event: any, ctx: any) => {
		const theme = ctx.ui.theme;
		const round = (_key: string, value: unknown) => (typeof value === "number" ? Math.round(value * 1e9) / 1e9 : value);
		const colors = theme.colors ?? {};
		const lines = [
			`mode ${JSON.stringify(theme.mode)} ${theme.getColorMode()} ${theme.name} ${theme.appearance}`,
			`colors ${Object.keys(colors).length} frozen ${Object.isFrozen(colors)} ${Object.values(colors).every((c) => Object.isFrozen(c))}`,
			`kinds ${[...new Set(Object.values(colors).map((c: any) => c?.kind))].sort().join(",")}`,
			...["accent", "text", "muted", "selectedBg", "userMessageBg", "thinkingMax"].map((t) => `color ${t} ${JSON.stringify(colors[t], round)}`),
			`depth fg ${/\x1b\[38;2;/.test(theme.fg("accent", "x")) ? "24" : /\x1b\[38;5;/.test(theme.fg("accent", "x")) ? "256" : "default"}`,
			`depth bg ${/\x1b\[48;2;/.test(theme.bg("userMessageBg", "x")) ? "24" : /\x1b\[48;5;/.test(theme.bg("userMessageBg", "x")) ? "256" : "default"}`,
		];
		fs.writeFileSync(process.env.THEME_LOG ?? "theme.log", lines.join("\n") + "\n");
	});
}
