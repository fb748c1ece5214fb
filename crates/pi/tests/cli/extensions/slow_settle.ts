// At `agent_before_settle`: takes 1.5 s, proposes a note and asks for one more request, so
// a client's command that arrives meanwhile (an RPC `compact` right after `agent_end`)
// meets a run that has not settled yet.
export default function (pi: any) {
	pi.on("agent_before_settle", async (event: any) => {
		await new Promise((resolve) => setTimeout(resolve, 1500));
		return {
			entries: [...event.entries, { type: "custom", customType: "settle-note", data: {} }],
			continue: true,
		};
	});
}
