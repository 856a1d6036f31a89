"""The Streamlit app's own code: state, caches, pages."""
