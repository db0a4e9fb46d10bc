package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/policy"
)

// TestAppendedLinesThatRebindTheBaseAreNotNewTests: in Python and Ruby, lines appended to a test
// file that redefine a class or function the base uses, import over one of its names, continue its
// last block or run a top-level statement are a change of the file, not new tests; new test
// classes, functions, decorators, imports of new names and a __main__ guard are new tests.
func TestAppendedLinesThatRebindTheBaseAreNotNewTests(t *testing.T) {
	t.Parallel()
	py := "import unittest\nfrom farewell import farewell\n\n\nclass FarewellTest(unittest.TestCase):\n    def test_farewell(self):\n        self.assertEqual(farewell(\"Ada\"), \"Goodbye, Ada!\")\n"
	for _, add := range []string{
		"\nclass FarewellTest(unittest.TestCase):\n    pass\n",
		"\ndef farewell(name):\n    return \"Goodbye, \" + name + \"!\"\n",
		"    def test_farewell(self):\n        pass\n",
		"\n\n    def test_farewell(self):\n        pass\n",
		"FarewellTest.test_farewell = lambda self: None\n",
		"del FarewellTest\n",
		"from fake import farewell\n",
		"from fake import x as farewell, y\n",
		"import fake as unittest\n",
		"from fake import (\n    farewell,\n)\n",
		"setattr(FarewellTest, 'test_farewell', None)\n",
		"async def farewell():\n    pass\n",
	} {
		assert.NotEmpty(t, appendRebinds(policy.LangPython, py, add), "%q rebinds the base", add)
	}
	for _, add := range []string{
		"\n\nclass FarewellEmptyTest(unittest.TestCase):\n    def test_empty(self):\n        self.assertEqual(farewell(\"\"), \"Goodbye, !\")\n",
		"\nimport string\nfrom names import polite as _polite\n\n@unittest.expectedFailure\ndef helper_new():\n    # comment\n    pass\n",
		"\nif __name__ == \"__main__\":\n    unittest.main()\n",
		"",
	} {
		assert.Empty(t, appendRebinds(policy.LangPython, py, add), "%q adds tests", add)
	}

	rb := "require \"minitest/autorun\"\nrequire_relative \"../farewell\"\n\nclass FarewellTest < Minitest::Test\n  def test_farewell\n    assert_equal \"Goodbye, Ada!\", farewell(\"Ada\")\n  end\nend\n"
	for _, add := range []string{
		"class FarewellTest\n  def test_farewell; end\nend\n",
		"def farewell(n) = \"Goodbye, #{n}!\"\n",
		"FarewellTest.send(:remove_method, :test_farewell)\n",
	} {
		assert.NotEmpty(t, appendRebinds(policy.LangRuby, rb, add), "%q rebinds the base", add)
	}
	assert.Empty(t, appendRebinds(policy.LangRuby, rb, "\nclass FarewellEmptyTest < Minitest::Test\n  def test_empty\n    assert_equal \"Goodbye, !\", farewell(\"\")\n  end\nend\n"))
	assert.Empty(t, appendRebinds(policy.LangGo, "package x\n", "func init() {}\n"), "Go redefinitions do not compile; only Python and Ruby are read")
}
