"""Builds the optional compiled playout kernel; everything else is in pyproject.toml.

The kernel (`service/engine/_kernel.c`) is `optional`: where it cannot be built
(no C compiler, no Python headers) the install still succeeds and playouts run
on the pure Python reference (`service.engine.playout.BACKEND == "python"`).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "service.engine._kernel",
            sources=["service/engine/_kernel.c"],
            optional=True,
        )
    ]
)
