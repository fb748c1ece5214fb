// Logs each cache_warming_decision it sees to $WARMING_LOG and answers $WARMING_ACTION.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	pi.on("cache_warming_decision", (event: any) => {
		appendFileSync(
			process.env.WARMING_LOG!,
			JSON.stringify({
				action: event.action,
				hasCosts: typeof event.warmCost === "number" && typeof event.missCost === "number",
				continuationProbability: event.continuationProbability,
			}) + "\n",
		);
		return { action: process.env.WARMING_ACTION };
	});
}
