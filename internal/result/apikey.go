package result

import (
	"fmt"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
)

// CheckKey says why the API key cannot be redacted from a result of the
// bundle b without damaging evidence that is not private (nil: it can):
// it is too short, a word or made of the words every result holds (see
// redact.CheckKey), or, once the server has answered (srv set), part of
// what the server says about itself, which the result keeps and the
// validator identifies the engine from again ("b9928-81ff7ab" as the key
// of a llama.cpp of that build would be taken out of its /props).
func CheckKey(key string, b *fixtures.Bundle, srv *record.Server) error {
	var texts []string
	if b != nil {
		texts = append(texts, b.Texts()...)
		texts = append(texts, string(b.Template))
	}
	if err := redact.CheckKey(key, texts...); err != nil {
		return err
	}
	if srv == nil {
		return nil
	}
	for _, f := range []struct{ what, text string }{
		{"how it was identified", srv.Dialect.IdentifiedBy}, {"its version", srv.Dialect.Version}, {"its version", srv.BuildInfo},
		{"its model's alias", srv.ModelAlias}, {"its model's path", srv.ModelPath}, {"its chat template", srv.Template},
	} {
		if redact.KeyIn(key, f.text) {
			return fmt.Errorf("the API key is part of what the server says about itself (%s), which the result keeps as evidence; redacting the key would take it out there: give the server a key that is no part of it (for example the output of openssl rand -hex 16)", f.what)
		}
	}
	return nil
}
