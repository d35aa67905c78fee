// Package plant is test support: the private forms a security review
// planted in strata's result folders, each with the private part that must
// be gone and the placeholder that stands instead, and the machine they
// belong to. The redactor's tests, the end-to-end tests and the submit
// scan's tests share it, so every place text enters a folder is tried with
// every form.
package plant

// Form is one planted form.
type Form struct {
	Text    string // the text planted
	Private string // what must not survive
	Want    string // what the redacted text contains instead
}

// The machine the forms are planted on: its home, user, host names (a
// host in capitals and a two-letter one) and a known key.
var (
	HomeDirs = []string{"/home/alice"}
	Users    = []string{"alice"}
	Hosts    = []string{"WS-ALICE-01", "vm"}
	Secrets  = []string{"s3cr3t-profile-key"}
)

// Forms are the private forms.
var Forms = []Form{
	{"model at /home/alice/models/q.gguf", "alice", "<home>/models/q.gguf"},
	{"/Users/bob/Library/x", "bob", "<home>/Library/x"},
	{`C:\Users\carol\models\q.gguf`, "carol", `<home>\models\q.gguf`},
	{`"C:\\Users\\carol\\m.gguf"`, "carol", `<home>`},
	{"see ~dave/models/q.gguf", "dave", "<home>/models/q.gguf"},
	{"GET /files?path=%2Fhome%2Ferin%2Fq.gguf", "erin", "<home>"},
	{`share \\fileserver\models\q.gguf`, "fileserver", "<path>"},
	{"host ws-alice-01 ready", "ws-alice-01", "host <host> ready"},
	{"host WS-ALICE-01 ready", "WS-ALICE-01", "host <host> ready"},
	{"on vm ready", " vm ", "on <host> ready"},
	{"user Alice logged in", "Alice", "user <user> logged in"},
	{"user ALICE logged in", "ALICE", "user <user> logged in"},
	{"peer planted-host.example.lan answered", "planted-host", "peer <host> answered"},
	{"peer nas.local answered", "nas.local", "peer <host> answered"},
	{"listening on 192.168.1.20:8080", "192.168.1.20", "<private-ip>:8080"},
	{"peer 10.0.0.5 and 172.20.1.1 and 169.254.3.4", "10.0.0.5", "<private-ip>"},
	{"addr fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff", "<private-ip>"},
	{"addr fe80::1ff:fe23:4567:890a%wlan-0 up", "wlan-0", "<private-ip> up"},
	{"addr fd12:3456:789a::1", "fd12:3456", "<private-ip>"},
	{"mac 00:1A:2b:3C:4d:5E", "00:1A", "<mac>"},
	{"mac 001a.2b3c.4d5e on port", "001a.2b3c", "mac <mac> on"},
	{"contact alice.smith@example.com", "example.com", "<email>"},
	{"Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "Bearer <secret>"},
	{"Authorization: Bearer abc12", "abc12", "Bearer <secret>"},
	{"key sk-proj-ABCDEFGHIJKLMNOPQRSTUV123", "ABCDEFGHIJ", "<secret>"},
	{"token hf_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "hf_ABC", "<secret>"},
	{"ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Fg0Ja8Se2U", "ghp_R8m2", "<secret>"},
	{"gitlab glpat-aB3dE5fG7hJ9kL1mN3pQ", "glpat-aB3", "<secret>"},
	{"google AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "AIzaSy", "<secret>"},
	{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtn", "AWS_SECRET_ACCESS_KEY=<secret>"},
	{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtn", "<secret>"},
	{"id AKIAIOSFODNN7EXAMPL3", "AKIAIOSFODNN7EXAMPL3", "<secret>"},
	// The secret after its name and a space (a shell's "export" listing,
	// an ini file without "="), and after its key ID on the same line (a
	// credentials CSV, "aws configure" notes).
	{"aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtn", "aws_secret_access_key <secret>"},
	{"keys AKIAIOSFODNN7EXAMPL3 wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok", "wJalrXUtn", "keys <secret> <secret> ok"},
	{"AKIAIOSFODNN7EXAMPL3,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtn", "<secret>,<secret>"},
	{"url http://bob:S3cr3tP4ss@10.0.0.5:8080/v1", "S3cr3tP4ss", "http://<secret>@<private-ip>:8080/v1"},
	{"url http://bob:S3cr3tP4ss@127.0.0.1:8080/v1", "S3cr3tP4ss", "http://<secret>@127.0.0.1:8080/v1"},
	{"url https://svc:hunter2@models.example.org/x", "hunter2", "https://<secret>@models.example.org/x"},
	{`--api-key=supersecretvalue`, "supersecretvalue", "<secret>"},
	{`--api-key supersecretvalue --port 8080`, "supersecretvalue", "--api-key <secret> --port 8080"},
	{`password: hunter22`, "hunter22", "password: <secret>"},
	{"profile key s3cr3t-profile-key", "s3cr3t-profile-key", "<secret>"},
	{"-m /srv/ai/llm-models/tiny.gguf", "/srv/ai", "<path>/tiny.gguf"},
	{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBq8n2eN3FzQ0p1QXZyYk5xcm5kMnFqZ1N5cWJ0V1BZWnpkcwAAAJg\n-----END OPENSSH PRIVATE KEY-----\nnext line",
		"b3BlbnNz", "<secret>\nnext line"},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE8SeQ3", "MIIEpAIB", "<secret>"},

	// A setting's name with a prefix joined by an underscore, in env,
	// shell, YAML, JSON and flag forms.
	{"LLAMA_API_KEY=ll4maKeyV7q2", "ll4maKeyV7q2", "LLAMA_API_KEY=<secret>"},
	{`export OPENAI_API_KEY="oa1LocalZq81Xv"`, "oa1LocalZq81Xv", `export OPENAI_API_KEY="<secret>"`},
	{"MY_HF_TOKEN: hfl0calT0kenQw", "hfl0calT0kenQw", "MY_HF_TOKEN: <secret>"},
	{`{"DB_PASSWORD": "pgPa55w0rdX"}`, "pgPa55w0rdX", `{"DB_PASSWORD": "<secret>"}`},
	{"GITHUB_TOKEN=gh0therT0kenVal9", "gh0therT0kenVal9", "GITHUB_TOKEN=<secret>"},
	{"JWT_SECRET=jwtS1gn1ngVal", "jwtS1gn1ngVal", "JWT_SECRET=<secret>"},
	{"AZURE_STORAGE_ACCOUNT_KEY=azAcc0untKeyVal", "azAcc0untKeyVal", "AZURE_STORAGE_ACCOUNT_KEY=<secret>"},
	{"--llama-api-key ll4maFlagVal --port 8080", "ll4maFlagVal", "--llama-api-key <secret> --port 8080"},
	{"--my_hf_token hfUnd3rFlagVal --port 8080", "hfUnd3rFlagVal", "--my_hf_token <secret> --port 8080"},
	{"--github-token ghFlagT0kenVal", "ghFlagT0kenVal", "--github-token <secret>"},
	// Basic credentials, in a header and on their own.
	{"Authorization: Basic Ym9iOmh1bnRlcjIyMg==", "Ym9iOmh1bnRlcjIyMg", "Authorization: Basic <secret>"},
	{"proxy sent Basic Y2Fyb2w6cDRzc3cwcmQtYmFzaWM= upstream", "Y2Fyb2w6cDRzc3cwcmQtYmFzaWM", "Basic <secret> upstream"},
	// Azure storage: a connection string's key, a shared access signature.
	{"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MjQyNDI0Mg==;EndpointSuffix=core.windows.net",
		"QUJDREVGR0hJSktM", "AccountKey=<secret>;EndpointSuffix=core.windows.net"},
	{"GET https://acme.blob.core.windows.net/c/x?sv=2022-11-02&ss=b&sig=Zm9vYmFyYmF6cXV4MTIzNDU2%2Bxyz%3D", "Zm9vYmFyYmF6cXV4", "&sig=<secret>"},
	{"SharedAccessSignature=sv=2022-11-02&ss=b&sig=c2FzU2lnbmF0dXJlVmFs%3D;BlobEndpoint=x", "c2FzU2lnbmF0dXJl", "&sig=<secret>;BlobEndpoint"},
	// A private key's body without its BEGIN line, and without either line.
	{"key body:\n" + keyBody + "\n-----END RSA PRIVATE KEY-----\nnext line", "N7dMQwFX", "key body:\n<secret>\nnext line"},
	{"stray lines\n" + keyBody + "\nafter them", "Gem0M5ZC", "stray lines\n<secret>\nafter them"},
	// A Windows path inside JSON inside JSON, at two and three depths.
	{`"C:\\\\Users\\\\dora\\\\m.gguf"`, "dora", `"<home>\\\\m.gguf"`},
	{`C:\\\\\\\\Users\\\\\\\\erwin\\\\\\\\m.gguf`, "erwin", `<home>\\\\\\\\m.gguf`},
	{`"D:\\\\llm7store\\\\q.gguf"`, "llm7store", `"<path>\\\\q.gguf"`},
	{`{"path": "\/home\/frank\/q.gguf"}`, "frank", `\<home>\/q.gguf`},
	// Echoes of the key in use: in capitals, reversed, base64 (padded and
	// not), and inside basic credentials.
	{"echo S3CR3T-PROFILE-KEY", "S3CR3T-PROFILE-KEY", "echo <secret>"},
	{"echo yek-eliforp-t3rc3s", "yek-eliforp-t3rc3s", "echo <secret>"},
	{"b64 czNjcjN0LXByb2ZpbGUta2V5 end", "czNjcjN0LXByb2ZpbGUta2V5", "b64 <secret> end"},
	{`body {"b":"eyJrZXkiOiJzM2NyM3QtcHJvZmlsZS1rZXkifQ=="}`, "eyJrZXkiOiJzM2NyM3Qt", `{"b":"<secret>"}`},
	{"auth Basic Ym9iOnMzY3IzdC1wcm9maWxlLWtleQ==", "Ym9iOnMzY3IzdC1wcm9maWxlLWtleQ", "auth Basic <secret>"},
	// The key in use echoed hex-, URL-, \u- or
	// HTML-entity-encoded, split by spaces or zero-width characters, or
	// as its first characters.
	{"bad key 7333637233742d70726f66696c652d6b6579 rejected", "7333637233742d70726f66", "bad key <secret> rejected"},
	{"bad key 7333637233742D70726F66696C652D6B6579 rejected", "7333637233742D70726F66", "bad key <secret> rejected"},
	{"bad key %73%33%63%72%33%74%2D%70%72%6F%66%69%6C%65%2D%6B%65%79 rejected", "%73%33%63%72", "bad key <secret> rejected"},
	{"GET /v1/models?key=s3cr3t%2Dprofile%2Dkey HTTP/1.1", "s3cr3t%2D", "?key=<secret> HTTP/1.1"},
	{`bad key \u0073\u0033\u0063\u0072\u0033\u0074\u002d\u0070\u0072\u006f\u0066\u0069\u006c\u0065\u002d\u006b\u0065\u0079 rejected`, `\u0073\u0033`, "bad key <secret> rejected"},
	{"bad key &#115;&#51;&#99;&#114;&#51;&#116;&#45;&#112;&#114;&#111;&#102;&#105;&#108;&#101;&#45;&#107;&#101;&#121; rejected", "&#115;&#51;&#99;", "bad key <secret> rejected"},
	{"bad key &#x73;&#x33;&#x63;&#x72;&#x33;&#x74;&#x2d;&#x70;&#x72;&#x6f;&#x66;&#x69;&#x6c;&#x65;&#x2d;&#x6b;&#x65;&#x79; rejected", "&#x73;&#x33;", "bad key <secret> rejected"},
	{"bad key s3cr3t&#45;profile&#x2D;key rejected", "s3cr3t&#45;", "bad key <secret> rejected"},
	{"bad key s 3 c r 3 t - p r o f i l e - k e y rejected", "s 3 c r 3 t", "bad key <secret> rejected"},
	{"bad key s3cr3t-pro file-key rejected", "s3cr3t-pro", "bad key <secret> rejected"},
	{"bad key s3cr3t\u200b-profile\u200b-key rejected", "s3cr3t\u200b", "bad key <secret> rejected"},
	{"bad key s\u200c3\u200dc\u2060r\ufeff3\u00adt-profile-key rejected", "s\u200c3", "bad key <secret> rejected"},
	{"bad key s3cr3t-pro... rejected", "s3cr3t-pro", "bad key <secret>... rejected"},
	{"bad key S3CR3T-PROF\u2026 rejected", "S3CR3T-PROF", "bad key <secret>\u2026 rejected"},
	// A private key's body after an empty BEGIN … END
	// block, on one line or on lines too few for the rule of bare lines.
	{"-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n" + oneLineBody + "\nnext line", "MIIEvAIBADAN", "<secret>\nnext line"},
	{"-----BEGIN RSA PRIVATE KEY----------END RSA PRIVATE KEY-----\n" + keyBody[:65+65] + "Gem0M5ZC\nnext line", "N7dMQwFX", "<secret>\nnext line"},
	{"-----BEGIN EC PRIVATE KEY-----\r\n-----END EC PRIVATE KEY-----\r\n\r\n" + oneLineBody + " next", "MIIEvAIBADAN", "<secret> next"},
	{`{"log":"-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n` + oneLineBody + `\nnext line"}`, "MIIEvAIBADAN", `<secret>\nnext line`},
}

// oneLineBody is a private key's body on one line (PEM without its line
// breaks, as a log that joins lines writes it).
const oneLineBody = "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC7VJTUt9Us8cKj" +
	"MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu" +
	"NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ"

// keyBody is the body of a private key block (random base64 in PEM's
// lines of 64).
const keyBody = "Lh+pclU9MvN9oH4uekt140MyQOaxHlOFrMPJLN338c88KzwzvF2TgTPPreTfwdV+\n" +
	"N7dMQwFX+Wc4xbpniViXkoZF00WZtU2NHUh6keyAJX6vy6HLKTA0pa/ObyFog3qS\n" +
	"Gem0M5ZCiNhWys/V0qiLeBZ9JXomfRQ/pReLWjTu6cihZMqU0YiuwoYB/P0ixbDY\n" +
	"4hZ6ZtFnLmJqIUW1Za6zXCRVVrrYnE3pIG/+sordBOaSbCXEKZ29zqbkbQGDjo/T\n" +
	"dYwZAsSbxUFsvmd6nI543mrW4NY="
