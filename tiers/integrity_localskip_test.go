package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestASkipOfItsOwnTestIsKnownByItsLine: in a file the work adds, a line that is nothing but a
// skip of the test it is in is a warning; a skip applied by a call, one that smuggles an early
// exit, a focus or a loader hook is still a weakening marker.
func TestASkipOfItsOwnTestIsKnownByItsLine(t *testing.T) {
	t.Parallel()
	tables := defaultMarkerTables()
	own := map[string][]string{
		langGo: {`	t.Skip("not written yet")`, `func TestMul(t *testing.T) { t.Skip("not written yet") }`, `	if testing.Short() { t.Skip("slow") }`,
			`	t.Skipf("needs %s", name)`, `	t.SkipNow()`, `//go:build integration`, `// +build linux,amd64`},
		langPython: {`    @unittest.skip("not written yet")`, `@unittest.skipIf(sys.platform == "win32", "posix only")`,
			`@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs 3.12")`, `        self.skipTest("slow")`, `@pytest.mark.xfail`, `        raise unittest.SkipTest("no network")`},
		langJS: {`test('multiplies', { skip: 'not written yet' }, () => {});`, `it.skip("later", async () => {`, `  xit('later', function () {`,
			`describe.skip("suite", () => {`, `  t.skip("no network");`, `test.todo("divides");`},
		langRust:  {`    #[ignore]`, `#[ignore = "slow"]`},
		langJava:  {`    @Disabled`, `@Ignore("flaky on CI")`},
		langRuby:  {`    skip "later"`, `  pending`, `  xit "later" do`},
		langShell: {`  skip "later"`, `skip`},
	}
	global := map[string][]string{
		langGo:     {`	t.Skip(fmt.Sprint(func() int { os.Exit(0); return 0 }()))`, `func TestMain(m *testing.M) { os.Exit(0) }`, `	t.Skip("x"); os.Exit(0)`},
		langPython: {`FarewellTest = unittest.skip("x")(FarewellTest)`, `unittest.skip("x")(base.FarewellTest)`, `@unittest.skip(sys.exit(0))`, `@unittest.skip("x")  # load_tests`},
		langJS:     {`test.only("x", () => {});`, `fit("x", () => {});`, `test("x", { only: true }, () => {});`, `it.skip("x", () => { process.exit(0) });`},
		langRust:   {`#[cfg(not(test))]`},
		langJava:   {`Assumptions.assumeTrue(false);`},
		langRuby:   {`focus`, `fit "x" do`},
		langShell:  {`skip; exit 0`},
	}
	for lang, lines := range own {
		for _, l := range lines {
			_, found := tables.skip[lang].find(l)
			assert.True(t, found, "%s: %q is a skip marker", lang, l)
			assert.True(t, onlySkips(lang, l, tables.skip[lang]), "%s: %q skips only its own test", lang, l)
		}
	}
	for lang, lines := range global {
		for _, l := range lines {
			assert.False(t, onlySkips(lang, l, tables.skip[lang]), "%s: %q is more than a skip of its own test", lang, l)
		}
	}
}
