// At `agent_before_settle`, replaces everything so far with a summary of its own
// (a compaction draft that keeps nothing before it).
export default function (pi: any) {
	pi.on("agent_before_settle", (event: any) => ({
		entries: [...event.entries, { type: "compaction", summary: "The user said go.", firstKeptEntryId: null, details: { by: "settle_compact" } }],
	}));
}
