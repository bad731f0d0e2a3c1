"""The code panel: the pipeline as NumPy and PyTorch code, each with a copy button.

One piece of HTML (no Bokeh model of its own: it is drawn in the fields' pane,
so a page costs no more models): an element with the class ``candela-code``
holding each snippet of :mod:`explorer.code` in a ``<pre>`` (classes
``candela-code-numpy``, ``candela-code-torch``) and a copy button
(``candela-copy-numpy``, ``candela-copy-torch``). A click puts the snippet on
the clipboard in the browser where the page may write it, else copies the
selection of a hidden text area; the script is fixed text of ours, and the
snippets are escaped, so nothing typed ever runs.
"""

from __future__ import annotations

import html

__all__ = ["code_html"]

#: Runs on a click, with ``this`` the button: copy the snippet of its block.
COPY_JS = (
    "const b=this,t=b.parentElement.parentElement.querySelector('pre').innerText;"
    "const done=()=>{b.textContent='copied';setTimeout(()=>{b.textContent='copy'},1500)};"
    "const slow=()=>{const a=document.createElement('textarea');a.value=t;"
    "a.className='candela-copied-text';a.style.position='fixed';a.style.opacity='0';"
    "document.body.appendChild(a);a.select();try{document.execCommand('copy')}catch(e){}"
    "a.remove();done()};"
    "if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t)"
    ".then(done,slow)}else{slow()}"
)


def code_html(numpy: str, torch: str) -> str:
    """The code panel's HTML for two snippets.

    >>> code_html("y = x.T", "y = x[::-1] < 1").count('<pre class="candela-code-')
    2
    >>> "y = x[::-1] &lt; 1" in code_html("", "y = x[::-1] < 1")  # escaped: shown, never run
    True
    """
    blocks = []
    for lib, label, text in (("numpy", "NumPy", numpy), ("torch", "PyTorch", torch)):
        blocks.append(
            '<div class="candela-code-block">'
            f'<div class="candela-code-head">{label} '
            f'<button type="button" class="candela-copy candela-copy-{lib}" '
            f'onclick="{html.escape(COPY_JS)}">copy</button></div>'
            f'<pre class="candela-code-{lib}">{html.escape(text)}</pre></div>'
        )
    return (
        '<div class="candela-code"><div class="candela-heading">code '
        '<span class="candela-legend">the pipeline in NumPy and PyTorch: run it, '
        "y is what you see</span></div>" + "".join(blocks) + "</div>"
    )
