// Two commands, one of them also registered by listed_b.ts (pi numbers the pair); `/solo`
// shows a notice.
export default function (pi: any) {
	pi.registerCommand("hey", { description: "Say hey", handler: async () => {} });
	pi.registerCommand("solo", {
		description: "Only here",
		handler: async (_args: string, ctx: any) => {
			ctx.ui.notify("solo ran", "info");
		},
	});
}
