"""pytest plugin: a skip is lost coverage. Under NPU_REQUIRE_FULL_COVERAGE=1
(scripts/test sets it, so CI does) a skipped test is reported as a failure."""
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    required = os.environ.get("NPU_REQUIRE_FULL_COVERAGE", "") not in ("", "0")
    if required and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but NPU_REQUIRE_FULL_COVERAGE is set: {reason}"
