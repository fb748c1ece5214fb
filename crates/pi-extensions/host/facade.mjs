// Our module for `@earendil-works/pi-coding-agent` (and the `@mariozechner` name): the value
// exports extensions use, reporting this pi's facts. A 1.6 export we do not provide yet fails
// when used, with a message naming it; a name 1.6 never exported reads as undefined, as there.
import path from "node:path";
import { createCustomEditorClass } from "./editor.mjs";
import {
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	formatSize,
	truncateHead,
	truncateLine,
	truncateTail,
} from "./truncate.mjs";

// The value exports of pi-coding-agent 1.6.0, by name (types are erased and need nothing).
const KNOWN_EXPORTS = `AgentSession AgentSessionRuntime DefaultPackageManager DefaultResourceLoader ExtensionRunner
ModelRegistry ModelRuntime CredentialSynchronizationError ProjectTrustStore RpcClient SessionManager SettingsManager
InteractiveMode Theme ArminComponent AssistantMessageComponent BashExecutionComponent BorderedLoader
BranchSummaryMessageComponent CompactionSummaryMessageComponent CustomEditor CustomMessageComponent DynamicBorder
ExtensionEditorComponent ExtensionInputComponent ExtensionSelectorComponent FooterComponent LoginDialogComponent
ModelSelectorComponent OAuthSelectorComponent SessionSelectorComponent SettingsSelectorComponent
ShowImagesSelectorComponent SkillInvocationMessageComponent ThemeSelectorComponent ThinkingSelectorComponent
ToolExecutionComponent TreeSelectorComponent UserMessageComponent UserMessageSelectorComponent VERSION
CURRENT_SESSION_VERSION DEFAULT_MAX_BYTES DEFAULT_MAX_LINES DEFAULT_COMPACTION_SETTINGS CONFIG_DIR_NAME
VIRTUAL_MODEL_STATE_ENTRY defineTool isToolCallEventType isBashToolResult isReadToolResult isEditToolResult
isWriteToolResult isGrepToolResult isFindToolResult isLsToolResult isPowerShellToolResult createExtensionRuntime
discoverAndLoadExtensions wrapRegisteredTool wrapRegisteredTools createEventBus createSyntheticSourceInfo
createBashTool createReadTool createEditTool createWriteTool createGrepTool createFindTool createLsTool
createPowerShellTool createBashToolDefinition createReadToolDefinition createEditToolDefinition
createWriteToolDefinition createGrepToolDefinition createFindToolDefinition createLsToolDefinition
createPowerShellToolDefinition createCodingTools createReadOnlyTools createLocalBashOperations
createLocalPowerShellOperations withFileMutationQueue truncateHead truncateTail truncateLine formatSize
formatReadLineRange generateDiffString generateUnifiedPatch renderDiff truncateToVisualLines createCodemodeExtension
createMcpExtension createToolSearchExtension createAgentSession createAgentSessionFromServices
createAgentSessionRuntime createAgentSessionServices main runPrintMode runRpcMode parseArgs resolveCliModel
resolveModelScopeWithDiagnostics readStoredCredential hasTrustRequiringProjectResources buildSessionContext
buildContextEntries buildSessionProjection sessionEntryToContextMessages parseSessionEntries migrateSessionEntries
getLatestCompactionEntry convertToLlm parseSkillBlock compact calculateContextTokens collectEntriesForBranchSummary
estimateTokens findCutPoint findTurnStartIndex generateBranchSummary generateSummary generateSummaryWithUsage
getLastAssistantUsage prepareBranchEntries serializeConversation shouldCompact loadProjectContextFiles loadSkills
loadSkillsFromDir formatSkillsForPrompt parseFrontmatter stripFrontmatter initTheme getMarkdownTheme
getSelectListTheme getSettingsListTheme highlightCode getLanguageFromPath keyHint keyText rawKeyHint getAgentDir
getDocsPath getExamplesPath getPackageDir getReadmePath getShellConfig getPowerShellConfig copyToClipboard
convertToPng resizeImage formatDimensionNote detectSupportedImageMimeTypeFromFile`.split(/\s+/);

const TOOL_RESULT_GUARDS = {
	isBashToolResult: "bash",
	isReadToolResult: "read",
	isEditToolResult: "edit",
	isWriteToolResult: "write",
	isGrepToolResult: "grep",
	isFindToolResult: "find",
	isLsToolResult: "ls",
	isPowerShellToolResult: "powershell",
};

/** Split `---\n<yaml>\n---\n<body>` into its parts; simple `key: value` lines only. */
function parseFrontmatter(content) {
	const normalized = String(content).replace(/\r\n/g, "\n");
	if (!normalized.startsWith("---\n")) return { frontmatter: {}, body: normalized };
	const end = normalized.indexOf("\n---", 4);
	if (end < 0) return { frontmatter: {}, body: normalized };
	const frontmatter = {};
	for (const line of normalized.slice(4, end).split("\n")) {
		const match = /^([A-Za-z0-9_-]+)\s*:\s*(.*)$/.exec(line);
		if (!match) continue;
		let value = match[2].trim();
		if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
			value = value.slice(1, -1);
		} else if (value === "true" || value === "false") {
			value = value === "true";
		} else if (value !== "" && !Number.isNaN(Number(value))) {
			value = Number(value);
		}
		frontmatter[match[1]] = value;
	}
	const bodyStart = normalized.indexOf("\n", end + 4);
	return { frontmatter, body: bodyStart < 0 ? "" : normalized.slice(bodyStart + 1) };
}

/** Run `fn` after every earlier call for the same file has finished (per host process). */
function makeMutationQueue() {
	const tails = new Map();
	return async function withFileMutationQueue(filePath, fn) {
		const key = path.resolve(filePath);
		const previous = tails.get(key) ?? Promise.resolve();
		let release;
		const current = new Promise((resolve) => {
			release = resolve;
		});
		const tail = previous.then(() => current);
		tails.set(key, tail);
		await previous;
		try {
			return await fn();
		} finally {
			release();
			if (tails.get(key) === tail) tails.delete(key);
		}
	};
}

const BUILTIN_TOOLS = { bash: "Bash", read: "Read", edit: "Edit", write: "Write", grep: "Grep", find: "Find", ls: "Ls", powershell: "PowerShell" };

/**
 * A built-in tool for an extension to wrap or re-register: its definition comes from pi's
 * tool list (the state mirror) and running it runs pi's own tool. Custom `operations` would
 * need pi's TypeScript implementation, which this host does not have.
 */
function builtinTool(host, name, factoryName, cwd, options) {
	if (options?.operations !== undefined) {
		throw new Error(`"${factoryName}" with custom operations is not supported by this pi's extension host yet`);
	}
	const info = host.toolInfo(name) ?? {};
	const label = name.charAt(0).toUpperCase() + name.slice(1);
	return {
		name,
		label: info.label ?? label,
		description: info.description ?? `pi's built-in ${name} tool`,
		parameters: info.parameters ?? { type: "object", properties: {} },
		promptSnippet: info.promptSnippet,
		promptGuidelines: info.promptGuidelines,
		async execute(toolCallId, params, signal) {
			const result = await host.runBuiltin({ toolCallId, name, args: params, cwd }, signal);
			if (result?.isError) {
				const text = (result.content ?? []).map((c) => c.text ?? "").join("\n");
				throw new Error(text || `${name} failed`);
			}
			return { content: result?.content ?? [], details: result?.details ?? {} };
		},
	};
}

/**
 * Build the facade. `host` carries this pi's facts (`agentDir`, `version`), the definitions of
 * pi's built-in tools (`toolInfo`) and a way to run them (`runBuiltin`).
 */
export function createFacade(host) {
	const provided = {
		VERSION: host.version,
		CONFIG_DIR_NAME: ".pi",
		CURRENT_SESSION_VERSION: 3,
		DEFAULT_MAX_BYTES,
		DEFAULT_MAX_LINES,
		getAgentDir: () => host.agentDir,
		defineTool: (tool) => tool,
		isToolCallEventType: (toolName, event) => event?.toolName === toolName,
		truncateHead,
		truncateTail,
		truncateLine,
		formatSize,
		parseFrontmatter,
		stripFrontmatter: (content) => parseFrontmatter(content).body,
		withFileMutationQueue: makeMutationQueue(),
		createEventBus: () => host.createEventBus(),
		createCodingTools: (cwd) => ["read", "bash", "edit", "write"].map((n) => builtinTool(host, n, "createCodingTools", cwd)),
		createReadOnlyTools: (cwd) => ["read", "grep", "find", "ls"].map((n) => builtinTool(host, n, "createReadOnlyTools", cwd)),
	};
	for (const [name, title] of Object.entries(BUILTIN_TOOLS)) {
		provided[`create${title}Tool`] = (cwd, options) => builtinTool(host, name, `create${title}Tool`, cwd, options);
		provided[`create${title}ToolDefinition`] = (cwd, options) =>
			builtinTool(host, name, `create${title}ToolDefinition`, cwd, options);
	}
	for (const [name, toolName] of Object.entries(TOOL_RESULT_GUARDS)) {
		provided[name] = (event) => event?.toolName === toolName;
	}
	// DynamicBorder: a full-width horizontal rule, coloured by an optional function.
	Object.defineProperty(provided, "DynamicBorder", {
		enumerable: true,
		get() {
			return class DynamicBorder {
				constructor(color = (text) => text) {
					this.color = color;
				}
				render(width) {
					return [this.color("─".repeat(Math.max(1, width)))];
				}
				invalidate() {}
			};
		},
	});

	provided.CustomEditor = createCustomEditorClass(host.loadTui);

	const unsupported = (name) =>
		new Error(`"${name}" from @earendil-works/pi-coding-agent is not supported by this pi's extension host yet`);
	// A stand-in that fails at the point of use with the name, not at import time (jiti copies
	// the module's keys when it imports it, so the stand-ins are real properties).
	const standIn = (name) =>
		new Proxy(function unsupportedExport() {}, {
			apply() {
				throw unsupported(name);
			},
			construct() {
				throw unsupported(name);
			},
			get(_fn, member) {
				if (member === Symbol.toPrimitive || member === "toString") return () => `[unsupported ${name}]`;
				throw unsupported(name);
			},
		});
	for (const name of KNOWN_EXPORTS) {
		if (!(name in provided)) provided[name] = standIn(name);
	}
	Object.defineProperty(provided, "__esModule", { value: true });
	return provided;
}
