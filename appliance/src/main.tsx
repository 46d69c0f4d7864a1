import { render } from 'preact';
import { App, prefetchPage } from './App';
import { loadBranding } from './branding/branding';
import { resumeSession } from './session/session';
import './styles/base.css';

prefetchPage(window.location.pathname);
void loadBranding();
void resumeSession();
render(<App />, document.getElementById('app')!);
