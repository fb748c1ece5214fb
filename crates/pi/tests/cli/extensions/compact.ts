// Answers session_before_compact: cancels when the instructions say "cancel", otherwise
// provides the summary itself.
export default function (pi: any) {
	pi.on("session_before_compact", (event: any) => {
		if (event.customInstructions === "cancel") return { cancel: true };
		return {
			compaction: {
				summary: `summary from extension (${event.reason}, ${event.branchEntries.length} entries)`,
				firstKeptEntryId: event.preparation.firstKeptEntryId,
				tokensBefore: event.preparation.tokensBefore,
			},
		};
	});
}
