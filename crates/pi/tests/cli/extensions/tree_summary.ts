// `/back`: return to the first prompt through ctx.navigateTree, summarising the branch left
// behind and labelling the summary.
export default function (pi: any) {
	pi.registerCommand("back", {
		description: "return to the first prompt with a summary of the branch left",
		handler: async (_args: string, ctx: any) => {
			const first = ctx.sessionManager
				.getEntries()
				.find((e: any) => e.type === "message" && e.message.role === "user");
			const result = await ctx.navigateTree(first.id, { summarize: true, label: "tried" });
			console.error(`navigated cancelled=${result.cancelled}`);
		},
	});
}
