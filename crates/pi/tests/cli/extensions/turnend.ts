// At the first `turn_end`: adds a note for the model and asks for one more request in the
// same run; every turn_end it saw is recorded in a mark at the second.
export default function (pi: any) {
	const seen: string[] = [];
	pi.on("turn_end", (event: any) => {
		seen.push(`turn ${event.turnIndex} ${event.outcome} entries=${event.entries.length} continue=${event.continue}`);
		if (seen.length === 1) {
			return {
				entries: [{ type: "custom_message", customType: "note", content: "and one more thing", display: false }],
				continue: true,
			};
		}
		return { entries: [{ type: "custom", customType: "mark", data: { seen } }] };
	});
}
