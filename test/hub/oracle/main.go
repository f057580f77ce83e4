// An outside reader of a Tally hub's transparency log, written only against Go's
// golang.org/x/mod/sumdb/note and sumdb/tlog: it verifies the served checkpoint note with the
// hub's verifier key, reads the tree through the served C2SP tiles (tlog.TileHashReader checks
// every tile against the signed root), and proves one entry's inclusion and the consistency of an
// older tree size. It prints what it proved as JSON; any failure exits 1.
//
// usage: main BASE_URL VERIFIER_KEY INDEX ENTRY_HEX OLD_SIZE
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func get(url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		fail("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		fail("GET %s: status %d %v", url, resp.StatusCode, err)
	}
	return body
}

// tiles reads C2SP tile paths: Go's sumdb paths carry the tile height (tile/8/L/N); C2SP's do not.
type tiles struct{ base string }

func (t tiles) Height() int { return 8 }

func (t tiles) ReadTiles(list []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(list))
	for i, tile := range list {
		path := strings.Replace(tile.Path(), "tile/8/", "tile/", 1)
		out[i] = get(t.base + "log/" + path)
	}
	return out, nil
}

func (t tiles) SaveTiles(list []tlog.Tile, data [][]byte) {}

func encode(hashes []tlog.Hash) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

func main() {
	if len(os.Args) != 6 {
		fail("usage: main BASE_URL VERIFIER_KEY INDEX ENTRY_HEX OLD_SIZE")
	}
	base, vkey := os.Args[1], os.Args[2]
	index, _ := strconv.ParseInt(os.Args[3], 10, 64)
	entry, err := hex.DecodeString(os.Args[4])
	if err != nil {
		fail("entry: %v", err)
	}
	oldSize, _ := strconv.ParseInt(os.Args[5], 10, 64)

	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		fail("verifier key: %v", err)
	}
	n, err := note.Open(get(base+"log/checkpoint"), note.VerifierList(verifier))
	if err != nil {
		fail("checkpoint note: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != verifier.Name() {
		fail("checkpoint text: origin %q, key %q", lines[0], verifier.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("checkpoint size: %v", err)
	}
	rootBytes, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(rootBytes) != tlog.HashSize {
		fail("checkpoint root: %v", err)
	}
	var root tlog.Hash
	copy(root[:], rootBytes)

	reader := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tiles{base})
	recordProof, err := tlog.ProveRecord(size, index, reader)
	if err != nil {
		fail("prove record: %v", err)
	}
	if err := tlog.CheckRecord(recordProof, size, root, index, tlog.RecordHash(entry)); err != nil {
		fail("check record: %v", err)
	}
	oldRoot, err := tlog.TreeHash(oldSize, reader)
	if err != nil {
		fail("old tree hash: %v", err)
	}
	treeProof, err := tlog.ProveTree(size, oldSize, reader)
	if err != nil {
		fail("prove tree: %v", err)
	}
	if err := tlog.CheckTree(treeProof, size, root, oldSize, oldRoot); err != nil {
		fail("check tree: %v", err)
	}
	out, _ := json.Marshal(map[string]interface{}{
		"origin":       lines[0],
		"size":         size,
		"root":         base64.StdEncoding.EncodeToString(root[:]),
		"record_proof": encode(recordProof),
		"old_size":     oldSize,
		"old_root":     base64.StdEncoding.EncodeToString(oldRoot[:]),
		"tree_proof":   encode(treeProof),
	})
	fmt.Println(string(out))
}
