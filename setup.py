"""Builds the optional compiled playout kernel; everything else is in pyproject.toml.

The kernel (`sniff/_kernel.c`) is `optional`: where it cannot be built
(no C compiler, no Python headers) the install still succeeds and playouts run
on the pure Python reference (`sniff.playout.BACKEND == "python"`).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sniff._kernel",
            sources=["sniff/_kernel.c"],
            optional=True,
        )
    ]
)
