// Sends messages into the conversation from the input hook: one recorded at once and one held
// for the next run.
export default function (pi: any) {
	pi.on("input", (event: any) => {
		if (event.text !== "go") return { action: "continue" };
		pi.sendMessage({ customType: "note", content: "recorded now", display: true });
		pi.sendMessage({ customType: "note", content: "for the next turn", display: false }, { deliverAs: "nextTurn" });
		return { action: "continue" };
	});
}
