/**
 * The Python side of a sandbox run, evaluated once before any user code (sandbox-child.ts). It
 * keeps the user's names in one namespace for the turn (state between two calls), turns an
 * exception into its last lines, and makes the modules that reach JavaScript unimportable: the
 * code sees the interpreter and its standard library, never the host (docs/code-interpreter.md).
 */
export const PYTHON_DRIVER = String.raw`
import sys, traceback, importlib.abc
from pyodide.code import eval_code_async

_BLOCKED = ('js', 'pyodide', 'pyodide_js', '_pyodide', '_pyodide_core', 'micropip', 'pyodide_http', 'ctypes', '_ctypes', '_socket', 'ssl', '_ssl')
_HINT = " is not installed on this server; an admin can add packages to PARLEY_PYODIDE_PACKAGES_DIR (docs/code-interpreter.md)"

class _Deny(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in _BLOCKED:
            raise ImportError(f"The module {name} is not available in this sandbox: code here cannot reach the server or the network.")
        return None

sys.meta_path.insert(0, _Deny())
for _name in list(sys.modules):
    if _name.split('.')[0] in _BLOCKED:
        del sys.modules[_name]
_ns = {'__name__': '__main__', '__builtins__': __builtins__}

def _error_of(e):
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == '<exec>']
    lines = traceback.format_list(frames[-5:]) + traceback.format_exception_only(type(e), e)
    text = ''.join(lines).rstrip()
    if type(e) is ModuleNotFoundError and e.name:
        text += '\n' + e.name.split('.')[0] + _HINT
    return text

async def _run(code):
    try:
        value = await eval_code_async(code, _ns)
    except BaseException as e:
        return [None, _error_of(e)]
    return [None if value is None else repr(value), None]

_run
`;
