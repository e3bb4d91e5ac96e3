"""The SDK example in README.md runs as written."""
import pathlib
import re


def test_readme_sdk_example_runs(server):
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Using the rAPId SDK", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert list(scope["df"]["visitors"]) == [120, 80]
