// Extension components on screen for the keystroke bench: a widget above the editor that
// redraws on a timer, a widget below it, and a footer of the extension's own. Typing goes to
// pi's editor; the components stay on screen.
export default function (pi: any) {
	pi.on("session_start", (_event: any, ctx: any) => {
		ctx.ui.setWidget("clock", (tui: any, theme: any) => {
			let ticks = 0;
			const timer = setInterval(() => {
				ticks++;
				tui.requestRender();
			}, 250);
			return {
				render: (width: number) => [theme.fg("accent", `bench widget tick ${ticks}`.padEnd(Math.min(width, 40)))],
				invalidate() {},
				dispose: () => clearInterval(timer),
			};
		});
		ctx.ui.setWidget("below", ["below the editor"], { placement: "belowEditor" });
		ctx.ui.setFooter((_tui: any, theme: any, data: any) => ({
			render: (width: number) => [theme.fg("dim", `bench footer ${data.getGitBranch() ?? "-"}`.slice(0, width))],
			invalidate() {},
		}));
	});
}
