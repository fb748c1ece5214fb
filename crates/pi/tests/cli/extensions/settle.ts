// At `agent_before_settle`, the first time: adds a note for the model and asks for one more
// request; the second time: marks the session and lets the run settle. What each call saw is
// recorded in the mark.
export default function (pi: any) {
	const seen: string[] = [];
	pi.on("agent_before_settle", (event: any) => {
		seen.push(`${event.outcome} canContinue=${event.context?.canContinue} entries=${event.entries.length}`);
		if (seen.length === 1) {
			return {
				entries: [...event.entries, { type: "custom_message", customType: "note", content: "please go on", display: true }],
				continue: true,
			};
		}
		return { entries: [{ type: "custom", customType: "mark", data: { seen } }] };
	});
}
