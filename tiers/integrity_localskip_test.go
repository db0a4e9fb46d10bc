package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/policy"
)

// TestASkipOfItsOwnTestIsKnownByItsLine: in a file the work adds, a line that is nothing but a
// skip of the test it is in is a warning; a skip applied by a call, one that smuggles an early
// exit, a focus or a loader hook is still a weakening marker.
func TestASkipOfItsOwnTestIsKnownByItsLine(t *testing.T) {
	t.Parallel()
	tables := policy.DefaultMarkers()
	own := map[string][]string{
		policy.LangGo: {`	t.Skip("not written yet")`, `func TestMul(t *testing.T) { t.Skip("not written yet") }`, `	if testing.Short() { t.Skip("slow") }`,
			`	t.Skipf("needs %s", name)`, `	t.SkipNow()`, `//go:build integration`, `// +build linux,amd64`},
		policy.LangPython: {`    @unittest.skip("not written yet")`, `@unittest.skipIf(sys.platform == "win32", "posix only")`,
			`@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs 3.12")`, `        self.skipTest("slow")`, `@pytest.mark.xfail`, `        raise unittest.SkipTest("no network")`},
		policy.LangJS: {`test('multiplies', { skip: 'not written yet' }, () => {});`, `it.skip("later", async () => {`, `  xit('later', function () {`,
			`describe.skip("suite", () => {`, `  t.skip("no network");`, `test.todo("divides");`},
		policy.LangRust:  {`    #[ignore]`, `#[ignore = "slow"]`},
		policy.LangJava:  {`    @Disabled`, `@Ignore("flaky on CI")`},
		policy.LangRuby:  {`    skip "later"`, `  pending`, `  xit "later" do`},
		policy.LangShell: {`  skip "later"`, `skip`},
	}
	global := map[string][]string{
		policy.LangGo:     {`	t.Skip(fmt.Sprint(func() int { os.Exit(0); return 0 }()))`, `func TestMain(m *testing.M) { os.Exit(0) }`, `	t.Skip("x"); os.Exit(0)`},
		policy.LangPython: {`FarewellTest = unittest.skip("x")(FarewellTest)`, `unittest.skip("x")(base.FarewellTest)`, `@unittest.skip(sys.exit(0))`, `@unittest.skip("x")  # load_tests`},
		policy.LangJS:     {`test.only("x", () => {});`, `fit("x", () => {});`, `test("x", { only: true }, () => {});`, `it.skip("x", () => { process.exit(0) });`},
		policy.LangRust:   {`#[cfg(not(test))]`},
		policy.LangJava:   {`Assumptions.assumeTrue(false);`},
		policy.LangRuby:   {`focus`, `fit "x" do`},
		policy.LangShell:  {`skip; exit 0`},
	}
	for lang, lines := range own {
		for _, l := range lines {
			_, found := tables.Skip(lang).Find(l)
			assert.True(t, found, "%s: %q is a skip marker", lang, l)
			assert.True(t, onlySkips(lang, l, tables.Skip(lang)), "%s: %q skips only its own test", lang, l)
		}
	}
	for lang, lines := range global {
		for _, l := range lines {
			assert.False(t, onlySkips(lang, l, tables.Skip(lang)), "%s: %q is more than a skip of its own test", lang, l)
		}
	}
}
