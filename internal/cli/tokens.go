package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/abandon"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/tokenizer"
)

func newTokens(env procstate.State) *cobra.Command {
	var tokPath, tmplPath, msgPath, toolsPath, kwargs string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tokens --tokenizer PATH [--template PATH --messages FILE.json [--tools FILE.json] [--kwargs JSON]] [--json]",
		Short: "Count a prompt's tokens: stdin, or messages with a template",
		Long: `Print the token IDs of a text (read from stdin, byte for byte) or of a chat
rendered with a template, as a JSON array, and the count. --json prints
{"count":N,"ids":[...]} instead.

--messages is a JSON array of messages, or an object with "messages" and
optionally "tools" and "kwargs" (a line of the chat-template vectors works as
is). The template is rendered as a server does for the benchmark: with a
generation prompt and the profile's kwargs (enable_thinking, preserve_thinking,
reasoning_effort), unless --kwargs or the file's "kwargs" gives the template
variables instead (add_generation_prompt is false when they omit it).`,
		Example: `  echo -n 'Hello world' | strata tokens --tokenizer tokenizer.json
  strata tokens --tokenizer tokenizer.json --template chat_template.jinja --messages chat.json --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("tokenizer", tokPath); err != nil {
				return err
			}
			if msgPath == "" && (toolsPath != "" || kwargs != "") {
				return usagef("--tools and --kwargs need --messages")
			}
			tokPath = env.Path(tokPath)
			if msgPath != "" && tmplPath == "" {
				if !gguf.Named(tokPath) {
					return usagef("--messages needs --template (or a GGUF --tokenizer that carries one)")
				}
				tmplPath = tokPath
			}
			// Messages and their template are small files, read and
			// rendered before the tokenizer's 150,000 tokens, so that a
			// bad one fails at once. Text on stdin is read after: a
			// wrong --tokenizer is said before anyone types.
			var text string
			var err error
			if msgPath != "" {
				if text, err = promptText(cmd.Context(), env, msgPath, toolsPath, tmplPath, kwargs); err != nil {
					return err
				}
			}
			tok, err := env.Tokenizer(cmd.Context(), tokPath)
			if err != nil {
				return err
			}
			if msgPath == "" {
				if text, err = promptText(cmd.Context(), env, msgPath, toolsPath, tmplPath, kwargs); err != nil {
					return err
				}
			}
			return writeTokens(cmd.Context(), cmd.OutOrStdout(), tok, text, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&tokPath, "tokenizer", "", "tokenizer.json, vocab.json, a folder with either, or a GGUF file")
	f.StringVar(&tmplPath, "template", "", "chat template (.jinja, tokenizer_config.json or GGUF) for --messages")
	f.StringVar(&msgPath, "messages", "", "JSON file: an array of messages, or {messages, tools, kwargs}")
	f.StringVar(&toolsPath, "tools", "", "JSON file with the tools array")
	f.StringVar(&kwargs, "kwargs", "", `template variables as a JSON object, e.g. '{"add_generation_prompt":true}'`)
	f.BoolVar(&asJSON, "json", false, `print {"count":N,"ids":[...]}`)
	return cmd
}

// maxStdin bounds the text tokens reads from stdin.
const maxStdin = 256 << 20

// readAll reads r to its end, at most limit bytes; a signal (ctx) ends the
// wait at once, even while nothing arrives on a terminal.
func readAll(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	data, err := abandon.Do(ctx, func() ([]byte, error) { return io.ReadAll(io.LimitReader(r, limit+1)) })
	if ctx.Err() != nil {
		return nil, fmt.Errorf("stopped (%w)", context.Cause(ctx))
	}
	if err == nil && int64(len(data)) > limit {
		return nil, fmt.Errorf("more than %d MiB", limit>>20)
	}
	return data, err
}

// promptText is the text to tokenize: stdin byte for byte, or the chat in
// msgPath rendered with the template.
func promptText(ctx context.Context, env procstate.State, msgPath, toolsPath, tmplPath, kwargs string) (string, error) {
	if msgPath == "" {
		data, err := readAll(ctx, env.Stdin, maxStdin)
		if err != nil {
			return "", fmt.Errorf("read stdin: %w", err)
		}
		if !utf8.Valid(data) {
			return "", fmt.Errorf("stdin is not valid UTF-8")
		}
		return string(data), nil
	}
	in, err := chatInput(env.Path(msgPath), env.Path(toolsPath), kwargs)
	if err != nil {
		return "", err
	}
	tmpl, err := env.Template(ctx, tmplPath)
	if err != nil {
		return "", err
	}
	text, err := tmpl.RenderContext(ctx, in)
	if err != nil {
		return "", fmt.Errorf("chat template %s: %w", tmplPath, err)
	}
	return text, nil
}

// writeTokens prints the IDs of text and their count. The tokenization
// ends when ctx does, even in the middle of one regex match.
func writeTokens(ctx context.Context, w io.Writer, tok *tokenizer.Tokenizer, text string, asJSON bool) error {
	ids, err := abandon.Do(ctx, func() ([]int, error) { return tok.EncodeContext(ctx, text) })
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Count int   `json:"count"`
			IDs   []int `json:"ids"`
		}{len(ids), nonNil(ids)})
	}
	if _, err := fmt.Fprintln(w, idsJSON(ids)); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%d tokens\n", len(ids))
	return err
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

func idsJSON(ids []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
	}
	b.WriteByte(']')
	return b.String()
}

// chatInput reads --messages (and --tools, --kwargs) into a render input.
func chatInput(msgPath, toolsPath, kwargsFlag string) (chattemplate.Input, error) {
	data, err := inputfile.Read(msgPath, maxStdin)
	if err != nil {
		return chattemplate.Input{}, fmt.Errorf("--messages: %w", err)
	}
	data = bytes.TrimSpace(data)
	var messages, tools json.RawMessage
	var kwargs map[string]json.RawMessage
	switch {
	case len(data) > 0 && data[0] == '[':
		messages = data
	case len(data) > 0 && data[0] == '{':
		var obj struct {
			Messages json.RawMessage            `json:"messages"`
			Tools    json.RawMessage            `json:"tools"`
			Kwargs   map[string]json.RawMessage `json:"kwargs"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return chattemplate.Input{}, fmt.Errorf("--messages %s: %w", msgPath, err)
		}
		if len(obj.Messages) == 0 {
			return chattemplate.Input{}, fmt.Errorf("--messages %s: the object has no \"messages\"", msgPath)
		}
		messages, tools, kwargs = obj.Messages, obj.Tools, obj.Kwargs
	default:
		return chattemplate.Input{}, fmt.Errorf("--messages %s: expected a JSON array of messages or an object with \"messages\"", msgPath)
	}
	if !json.Valid(messages) {
		return chattemplate.Input{}, fmt.Errorf("--messages %s: not valid JSON", msgPath)
	}
	if toolsPath != "" {
		if tools, err = inputfile.Read(toolsPath, maxStdin); err != nil {
			return chattemplate.Input{}, fmt.Errorf("--tools: %w", err)
		}
		if !json.Valid(tools) {
			return chattemplate.Input{}, fmt.Errorf("--tools %s: not valid JSON", toolsPath)
		}
	}
	if string(bytes.TrimSpace(tools)) == "null" {
		tools = nil
	}
	if kwargsFlag != "" {
		if err := json.Unmarshal([]byte(kwargsFlag), &kwargs); err != nil {
			return chattemplate.Input{}, usagef("--kwargs: expected a JSON object: %v", err)
		}
	}
	if kwargs == nil {
		return corpus.PromptInput(messages, tools), nil
	}
	in := chattemplate.Input{Messages: messages, Tools: tools, Kwargs: map[string]json.RawMessage{}}
	for k, v := range kwargs {
		if k == "add_generation_prompt" {
			if err := json.Unmarshal(v, &in.AddGenerationPrompt); err != nil {
				return chattemplate.Input{}, fmt.Errorf("kwargs add_generation_prompt: expected a boolean")
			}
			continue
		}
		in.Kwargs[k] = v
	}
	return in, nil
}
