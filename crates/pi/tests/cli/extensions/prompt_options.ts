// before_agent_start edits every field of pi 1.6's `systemPromptOptions` in place: a section,
// a prompt guideline, the appended text, a tool's snippet and another's guidelines, a context
// file, the skills (all removed), a hidden tool and the selected tools. What the handler saw
// goes, one line each, to the file in OPTIONS_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.OPTIONS_LOG ?? "options.log", `${line}\n`);
	pi.on("before_agent_start", (event: any) => {
		const o = event.systemPromptOptions;
		log(`keys ${Object.keys(o).sort().join(",")}`);
		log(`selected ${o.selectedTools.join(",")} hidden=${o.hiddenTools.length} skills=${o.skills.length}`);
		o.sections.house_rules = "Answer like a lighthouse keeper.";
		o.promptGuidelines.push("Guideline from the extension");
		o.appendSystemPrompt = "Appended by the extension";
		o.toolSnippets.read = "Read files (snippet from the extension)";
		o.toolGuidelines.bash = [...(o.toolGuidelines.bash ?? []), "Bash guideline from the extension"];
		o.contextFiles.push({ path: "/virtual/EXTENSION.md", content: "Context from the extension" });
		o.skills.length = 0;
		o.hiddenTools.push("edit");
		o.selectedTools = o.selectedTools.filter((name: string) => name !== "write");
	});
}
