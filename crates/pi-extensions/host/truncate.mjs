// Output truncation helpers for extensions, with the same cuts as our built-in tools:
// whole lines from the head or the tail, limited by a line count and a UTF-8 byte count.
export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
const GREP_MAX_LINE_LENGTH = 500;

const bytesOf = (text) => Buffer.byteLength(text, "utf8");

export function formatSize(bytes) {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function limits(options) {
	return {
		maxLines: options?.maxLines ?? DEFAULT_MAX_LINES,
		maxBytes: options?.maxBytes ?? DEFAULT_MAX_BYTES,
	};
}

function untouched(content, totalLines, maxLines, maxBytes) {
	const totalBytes = bytesOf(content);
	return {
		content,
		truncated: false,
		truncatedBy: null,
		totalLines,
		totalBytes,
		outputLines: totalLines,
		outputBytes: totalBytes,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

export function truncateHead(content, options) {
	const { maxLines, maxBytes } = limits(options);
	const lines = content.split("\n");
	const totalBytes = bytesOf(content);
	if (lines.length <= maxLines && totalBytes <= maxBytes) return untouched(content, lines.length, maxLines, maxBytes);
	const result = {
		content: "",
		truncated: true,
		truncatedBy: "bytes",
		totalLines: lines.length,
		totalBytes,
		outputLines: 0,
		outputBytes: 0,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
	if (bytesOf(lines[0]) > maxBytes) {
		result.firstLineExceedsLimit = true;
		return result;
	}
	let kept = 0;
	let bytes = 0;
	let by = "lines";
	for (let i = 0; i < lines.length && i < maxLines; i++) {
		const cost = bytesOf(lines[i]) + (i > 0 ? 1 : 0);
		if (bytes + cost > maxBytes) {
			by = "bytes";
			break;
		}
		kept++;
		bytes += cost;
	}
	if (kept >= maxLines && bytes <= maxBytes) by = "lines";
	result.content = lines.slice(0, kept).join("\n");
	result.truncatedBy = by;
	result.outputLines = kept;
	result.outputBytes = bytesOf(result.content);
	return result;
}

/** The last `maxBytes` bytes of `line`, never splitting a character. */
function tailBytes(line, maxBytes) {
	const buffer = Buffer.from(line, "utf8");
	let start = Math.max(0, buffer.length - maxBytes);
	// Skip UTF-8 continuation bytes so the cut lands on a character start.
	while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
	return buffer.subarray(start).toString("utf8");
}

export function truncateTail(content, options) {
	const { maxLines, maxBytes } = limits(options);
	const lines = content.split("\n");
	const totalBytes = bytesOf(content);
	if (lines.length <= maxLines && totalBytes <= maxBytes) return untouched(content, lines.length, maxLines, maxBytes);
	const kept = [];
	let bytes = 0;
	let by = "lines";
	let partial = false;
	for (let i = lines.length - 1; i >= 0; i--) {
		if (kept.length >= maxLines) break;
		const cost = bytesOf(lines[i]) + (kept.length > 0 ? 1 : 0);
		if (bytes + cost > maxBytes) {
			by = "bytes";
			if (kept.length === 0) {
				const tail = tailBytes(lines[i], maxBytes);
				bytes = bytesOf(tail);
				kept.push(tail);
				partial = true;
			}
			break;
		}
		kept.push(lines[i]);
		bytes += cost;
	}
	if (kept.length >= maxLines && bytes <= maxBytes) by = "lines";
	kept.reverse();
	const output = kept.join("\n");
	return {
		content: output,
		truncated: true,
		truncatedBy: by,
		totalLines: lines.length,
		totalBytes,
		outputLines: kept.length,
		outputBytes: bytesOf(output),
		lastLinePartial: partial,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

export function truncateLine(line, maxChars = GREP_MAX_LINE_LENGTH) {
	if (line.length <= maxChars) return { text: line, wasTruncated: false };
	let end = maxChars;
	const high = line.charCodeAt(end - 1);
	// Do not leave half of a surrogate pair before the cut.
	if (high >= 0xd800 && high <= 0xdbff) end--;
	return { text: `${line.slice(0, end)}... [truncated]`, wasTruncated: true };
}
